import a


def inner_step(optimizer):
    a.apply_update(optimizer)


def recurse(model, loader, optimizer, depth):
    for x in loader:
        model(x).sum().backward()  # alone: TL101
        recurse_back(model, loader, optimizer, depth)


def recurse_back(model, loader, optimizer, depth):
    a.train(model, loader, None)
    recurse(model, loader, optimizer, depth - 1)

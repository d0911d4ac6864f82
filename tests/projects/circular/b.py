import a


def inner_step(optimizer):
    a.apply_update(optimizer)


def recurse(model, loader, depth):
    for x in loader:
        model(x).sum().backward()  # alone: TL101
        recurse_back(model, loader, depth)


def recurse_back(model, loader, depth):
    a.train(model, loader, None)
    recurse(model, loader, depth - 1)

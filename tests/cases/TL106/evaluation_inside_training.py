import torch


def train_one_epoch(model, loader, optimizer):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()


def run(model, train_loader, val_loader, optimizer, epochs):
    for epoch in range(epochs):
        train_one_epoch(model, train_loader, optimizer)
        model.eval()
        correct = 0
        for x, y in val_loader:
            correct += (model(x).argmax(1) == y).sum()  # expect: TL106

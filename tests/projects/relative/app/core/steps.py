import torch


def validate(model, loader):
    model.eval()
    correct = 0
    for x, y in loader:
        correct += (model(x).argmax(-1) == y).sum()  # alone: TL106
    return correct


def validate_unwrapped(model, loader):
    model.eval()
    for x, y in loader:
        model(x)  # alone: TL106  project: TL106


def train_epoch(model, loader, optimizer, criterion):
    model.train()
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()  # alone: TL102  project: TL102
        optimizer.step()

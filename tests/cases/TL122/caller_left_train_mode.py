# An evaluation function that never sets its model's mode, called right after the epoch's
# training while the model is still in train mode; and three near-misses: the caller puts the
# model in eval mode first, the function does it itself, the function evaluates another model.
import torch
from torch import nn


def val(net, data_loader):
    correct = 0
    for data, target in data_loader:
        with torch.no_grad():
            correct += (net(data).argmax(1) == target).sum().item()
    return correct


def validate_own_mode(net, data_loader):
    net.eval()
    with torch.no_grad():
        return sum(net(x).sum().item() for x, _ in data_loader)


def evaluate_checkpoint(net, data_loader, path):
    net = torch.load(path, weights_only=False)  # another model than the caller's
    total = 0.0
    with torch.no_grad():
        for data, _ in data_loader:
            total += net(data).sum().item()
    return total


def train(net, optimizer, loader, val_loader, epochs):
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        net.train()
        for data, target in loader:
            optimizer.zero_grad()
            criterion(net(data), target).backward()
            optimizer.step()
        print(epoch, val(net, val_loader))  # expect: TL122
        print(validate_own_mode(net, val_loader))
        print(evaluate_checkpoint(net, val_loader, "best.pt"))


def train_then_eval(net, optimizer, loader, val_loader, epochs):
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        net.train()
        for data, target in loader:
            optimizer.zero_grad()
            criterion(net(data), target).backward()
            optimizer.step()
        net.eval()
        print(epoch, val(net, val_loader))

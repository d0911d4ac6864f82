"""Loaders built inside a function, train_one_epoch()/evaluate() split, evaluate() called first
(and without no_grad), worker processes, a progress wrapper around the loader."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def progress(iterable):
    for item in iterable:  # a tqdm-like wrapper: it iterates the loader itself
        yield item


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 64), nn.ReLU())
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        return self.head(self.body(x))


def make_loaders():
    torch.manual_seed(0)
    train = TensorDataset(torch.randn(256, 8), torch.randint(0, 10, (256,)))
    val = TensorDataset(torch.randn(64, 8), torch.randint(0, 10, (64,)))
    train_loader = DataLoader(train, batch_size=32, shuffle=True, num_workers=2)  # line: train
    val_loader = DataLoader(val, batch_size=32)  # line: val
    return train_loader, val_loader


def train_one_epoch(model, loader, optimizer):
    model.train()
    for x, y in progress(loader):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)  # line: loss
        loss.backward()  # line: backward
        optimizer.step()


def evaluate(model, loader):
    model.eval()
    total = 0.0
    for x, y in loader:
        total += F.cross_entropy(model(x), y).item()  # line: eval_forward
    return total


def main():
    train_loader, val_loader = make_loaders()
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)  # line: optimizer
    print("before training", evaluate(model, val_loader))
    for epoch in range(50):
        train_one_epoch(model, train_loader, optimizer)
        print(epoch, evaluate(model, val_loader))


if __name__ == "__main__":
    main()

# A head built with `add_module` whose last module is a softmax outputs probabilities, and
# `model.forward(x)` / `criterion.forward(out, y)` are the calls they stand for. A module added
# after the softmax, or a softmax the model registers on itself, does not make its output one.
import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.head = nn.Sequential()
        self.head.add_module("fc", nn.Linear(16, classes))
        self.head.add_module("softmax", nn.Softmax(dim=1))

    def forward(self, x):
        return self.head.forward(x)


class Calibrated(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.head = nn.Sequential()
        self.head.add_module("softmax", nn.Softmax(dim=1))
        self.head.add_module("log", nn.Linear(classes, classes))
        self.add_module("probabilities", nn.Softmax(dim=1))

    def forward(self, x):
        return self.head(x)


def step(model, criterion, optimizer, x, y):
    optimizer.zero_grad()
    cost = criterion.forward(model.forward(x), y)  # expect: TL109
    cost.backward()
    optimizer.step()


def step_calibrated(model, criterion, optimizer, x, y):
    optimizer.zero_grad()
    cost = criterion(model(x), y)
    cost.backward()
    optimizer.step()


def main(batches):
    criterion = nn.CrossEntropyLoss()
    model = Classifier(10)
    other = Calibrated(10)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    other_optimizer = torch.optim.SGD(other.parameters(), lr=0.1)
    for x, y in batches:
        step(model, criterion, optimizer, x, y)
        step_calibrated(other, criterion, other_optimizer, x, y)

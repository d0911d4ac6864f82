# A focal loss module built on the with-logits BCE, called with the output of a model whose
# forward ends in a sigmoid; a second loss module, called with a model that returns logits.
import torch
import torch.nn.functional as F
from torch import nn


class FocalLoss(nn.Module):
    def __init__(self, gamma=2.0):
        super().__init__()
        self.gamma = gamma

    def forward(self, inputs, targets):
        bce = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")  # expect: TL114
        return ((1 - torch.exp(-bce)) ** self.gamma * bce).mean()


class SmoothedBce(nn.Module):
    def forward(self, logits, targets):
        return F.binary_cross_entropy_with_logits(logits, targets * 0.9 + 0.05)


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 1)

    def forward(self, x):
        return torch.sigmoid(self.fc(x))


class Logits(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 1)

    def forward(self, x):
        return self.fc(x)


def train(loader):
    model = Scorer()
    focal = FocalLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for x, y in loader:
        optimizer.zero_grad()
        pred = model(x)
        focal(pred.squeeze(1), y).backward()
        optimizer.step()


def train_logits(loader):
    # near-miss: the model returns logits, as the with-logits loss wants
    model = Logits()
    smoothed = SmoothedBce()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for x, y in loader:
        optimizer.zero_grad()
        out = model(x)
        smoothed(out.squeeze(1), y).backward()
        optimizer.step()

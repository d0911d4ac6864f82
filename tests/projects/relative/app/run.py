import torch

from . import core
from .core import steps
from .core.steps import validate as check


def main(model, loader, val_loader, criterion):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        steps.train_epoch(model, loader, optimizer, criterion)
        with torch.no_grad():
            check(model, val_loader)
        steps.validate_unwrapped(model, val_loader)


def main_inline(model, loader, val_loader, criterion):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        for x, y in loader:
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
        core.steps.validate_unwrapped(model, val_loader)  # project: TL105

"""Training and evaluation helpers, imported by train.py (the way many projects split them)."""

import torch


def train_one_epoch(model, loader, optimizer, loss_fn):
    total = torch.zeros(())
    for features, targets in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(features), targets)
        loss.backward()
        optimizer.step()
        total += loss.detach()
    return total.item() / len(loader)


def evaluate(model, loader, loss_fn):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for features, targets in loader:
            total += loss_fn(model(features), targets).item()
    return total / len(loader)

import torch

import engine
from engine import evaluate


def evaluate(model, loader):  # noqa: F811 - this definition replaces the imported one
    model.eval()
    with torch.no_grad():
        for x in loader:
            model(x)
    model.train()


def fit(model, loader, val_loader, criterion):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        for x, y in loader:
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
        evaluate(model, val_loader)


def fit_with_engine(engine, model, loader, criterion):
    """`engine` here is the caller's object (an ignite-style Engine), not engine.py."""
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        criterion(model(x), y).backward()
        optimizer.step()
        engine.update(model, optimizer)


def fit_with_module(model, loader, criterion):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
        engine.update(model, optimizer)  # project: TL105

import torch

from mypkg import evaluate, full_step
from mypkg.engine import backward_only, evaluate_and_restore


def fit_leaks_eval(model, loader, val_loader, criterion):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        evaluate(model, val_loader)  # project: TL105


def fit_restores(model, loader, val_loader, criterion):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        evaluate_and_restore(model, val_loader)


def fit_forgets_step(model, loader, criterion):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for batch in loader:
        backward_only(model, batch, criterion)  # project: TL101


def fit_with_helper(model, loader, criterion):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for batch in loader:
        full_step(model, batch, criterion, optimizer)

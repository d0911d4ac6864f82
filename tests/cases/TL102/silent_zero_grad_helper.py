import torch
from my_utils import reset_gradients


def optimizer_update(optimizer):
    optimizer.step()
    optimizer.zero_grad()


def train(model, loader, optimizer):
    for batch in loader:
        model(batch).mean().backward()
        optimizer_update(optimizer)


def train_external(model, loader, optimizer):
    for batch in loader:
        reset_gradients(model)
        model(batch).mean().backward()
        optimizer.step()

# The step lives in a helper the loop calls; no backward anywhere on the way.
import torch
from torch import nn


def apply_update(optimizer):
    optimizer.step()  # expect: TL121


def train(model, loader, epochs):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.MSELoss()
    for _ in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            apply_update(optimizer)
    return loss

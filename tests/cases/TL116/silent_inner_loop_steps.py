# Each inner iteration is a full step (its own clip and step): no accumulation across it;
# a counter that is not wrapped (`acc == 0` once, at the start) is no accumulation guard.
import torch
from torch import nn


def train(model, optimizer, loader, epochs):
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()


def warmup(model, loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    acc = 0
    for x, y in loader:
        acc += 1
        nn.functional.mse_loss(model(x), y).backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if acc == 0:
            optimizer.step()
        optimizer.zero_grad()

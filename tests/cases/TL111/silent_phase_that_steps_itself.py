# Two phases in one training function: a loop that clears and steps per batch, then one
# accumulated step over the whole loader. The first loop's clear belongs to its own step.
import torch
import torch.nn.functional as F


def train(model, loader, optimizer):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        F.nll_loss(model(x)[0], y).backward()
        optimizer.step()
    kl_loss = 0.0
    optimizer.zero_grad()
    for x, _ in loader:
        kl_loss += model(x)[1]
    kl_loss.backward()
    optimizer.step()

"""Outside training, a model's outputs or a loss collected across batches without `no_grad`
keep every batch's graph and activations."""

import torch
from torch import nn


def collect_outputs(model, loader):
    model.eval()
    outputs = []
    for x, _ in loader:
        outputs.append(model(x))  # expect: TL108
    return torch.cat(outputs)


def validation_loss(net, loader, criterion):
    total = 0.0
    for x, y in loader:
        out = net(x)
        total += criterion(out, y)  # expect: TL108
    return total


def collect_detached(model, loader):
    outputs = []
    for x, _ in loader:
        outputs.append(model(x).detach())
    return outputs

# The evaluation helper calls a helper that sets train mode, then runs the model.
import torch
from torch import nn


def prepare(model):
    model.train()  # expect: TL122


@torch.no_grad()
def evaluate(model, loader):
    losses = []
    for x, y in loader:
        prepare(model)
        losses.append(nn.functional.mse_loss(model(x), y).item())
    return sum(losses) / len(losses)

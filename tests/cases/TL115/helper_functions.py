# The step and the clip in a helper the loop calls once per accumulated batch.
import torch
from torch import nn


def apply_update(model, optimizer, max_norm):
    optimizer.step()
    nn.utils.clip_grad_value_(model.parameters(), max_norm)  # expect: TL115
    optimizer.zero_grad()


def train(model, loader, accumulation=4):
    optimizer = torch.optim.AdamW(model.parameters())
    for i, (x, y) in enumerate(loader):
        nn.functional.mse_loss(model(x), y).backward()
        if (i + 1) % accumulation == 0:
            apply_update(model, optimizer, 0.5)

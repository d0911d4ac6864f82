import re

import torch

PATTERN = None


def train(model, loader, optimizer, names):
    for epoch in range(3):
        # `re.compile` in the loop: not `torch.compile`
        keep = re.compile("|".join(names))
        for name, parameter in model.named_parameters():
            parameter.requires_grad_(bool(keep.search(name)))
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

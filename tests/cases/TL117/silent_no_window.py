# No accumulation (a step per backward), a loss from a helper that may scale it, and
# Accelerate's window (its backward divides by the accumulation steps).
import torch
from accelerate import Accelerator
from torch import nn


def compute_loss(model, batch, accumulation_steps):
    x, y = batch
    return nn.functional.mse_loss(model(x), y) / accumulation_steps


def plain(model, optimizer, loader):
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


def helper_scales(model, optimizer, loader, accumulation_steps):
    for i, batch in enumerate(loader):
        loss = compute_loss(model, batch, accumulation_steps)
        loss.backward()
        if (i + 1) % accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()


def accelerate(model, loader):
    accelerator = Accelerator(gradient_accumulation_steps=4)
    optimizer = torch.optim.AdamW(model.parameters())
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for x, y in loader:
        with accelerator.accumulate(model):
            loss = nn.functional.mse_loss(model(x), y)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()

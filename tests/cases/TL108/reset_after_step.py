"""A running loss reset after every optimizer step (gradient accumulation, as torchtune's
recipes do) spans a few micro-batches, not the epoch."""

import torch


def train(model, loader, optimizer, accumulation):
    running_loss = 0
    for step, (x, y) in enumerate(loader):
        loss = torch.nn.functional.mse_loss(model(x), y) / accumulation
        running_loss += loss
        loss.backward()
        if (step + 1) % accumulation == 0:
            optimizer.step()
            optimizer.zero_grad()
            print(running_loss.item())
            running_loss = 0


def train_epoch_total(model, loader, optimizer):
    epoch_loss = 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        epoch_loss += loss  # expect: TL108
    return epoch_loss

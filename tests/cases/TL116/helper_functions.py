# One step per batch, split into micro-batches that are each clipped after their backward.
import torch
from torch import nn


def train_step(model, optimizer, batch, micro_batch_size):
    optimizer.zero_grad()
    for micro in batch.split(micro_batch_size):
        model(micro).mean().backward()
        nn.utils.clip_grad_value_(model.parameters(), 0.5)  # expect: TL116
    optimizer.step()


def train(model, loader):
    optimizer = torch.optim.Adam(model.parameters())
    for batch in loader:
        train_step(model, optimizer, batch, 8)

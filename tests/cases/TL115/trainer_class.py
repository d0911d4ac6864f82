# A trainer whose accumulation block steps, then clips, then clears.
import torch
from torch import nn


class Trainer:
    def __init__(self, model, loader, max_norm, virtual_batch=4):
        self.model = model
        self.loader = loader
        self.max_norm = max_norm
        self.virtual_batch = virtual_batch
        self.optimizer = torch.optim.Adam(model.parameters())

    def train_epoch(self):
        accumulated = 0
        for x, y in self.loader:
            loss = nn.functional.mse_loss(self.model(x), y) / self.virtual_batch
            loss.backward()
            accumulated += 1
            if accumulated == self.virtual_batch:
                self.optimizer.step()
                if self.max_norm is not None:
                    nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)  # expect: TL115
                self.optimizer.zero_grad()
                accumulated = 0

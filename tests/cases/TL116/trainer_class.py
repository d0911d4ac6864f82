# The backward and the clip sit in a helper that each micro-batch calls.
import torch
from torch import nn


class Trainer:
    def __init__(self, model, accumulate=8):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        self.accumulate = accumulate

    def backward(self, loss):
        (loss / self.accumulate).backward()
        nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)

    def fit(self, loader):
        for step, (x, y) in enumerate(loader):
            loss = nn.functional.cross_entropy(self.model(x), y)
            self.backward(loss)  # expect: TL116
            if step % self.accumulate == 0:
                self.optimizer.step()
                self.optimizer.zero_grad()

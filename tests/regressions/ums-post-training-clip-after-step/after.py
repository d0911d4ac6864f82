"""Post-training of the encoder: each virtual batch clips, steps, clears."""
import torch
from torch import nn


class PostTraining:
    def __init__(self, model, dataset, batch_size=8, max_gradient_norm=5.0, virtual=4):
        self.model = model
        self.dataset = dataset
        self.batch_size = batch_size
        self.max_gradient_norm = max_gradient_norm
        self.virtual = virtual
        self.optimizer = torch.optim.Adam(model.parameters(), lr=3e-5)

    def run(self, loader):
        accumulate_batch = 0
        for batch_idx, (tokens, targets) in enumerate(loader):
            loss = nn.functional.cross_entropy(self.model(tokens), targets)
            (loss / self.virtual).backward()
            accumulate_batch += 1
            last = batch_idx == len(self.dataset) // self.batch_size
            if self.virtual == accumulate_batch or last:
                nn.utils.clip_grad_norm_(self.model.parameters(), self.max_gradient_norm)
                self.optimizer.step()
                self.optimizer.zero_grad()
                accumulate_batch = 0

"""A response-selection trainer with virtual batches: step, scheduler, then the clip, then clear."""
import torch
from torch import nn


class ResponseSelection:
    def __init__(self, model, loader, max_gradient_norm=5.0, virtual_batch_size=4):
        self.model = model
        self.loader = loader
        self.max_gradient_norm = max_gradient_norm
        self.virtual_batch_size = virtual_batch_size
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=3e-5)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, lambda s: 1.0)

    def train(self, epochs):
        for epoch in range(epochs):
            accu_batch = 0
            for batch_idx, (inputs, labels) in enumerate(self.loader):
                logits = self.model(inputs).squeeze(-1)
                loss = nn.functional.binary_cross_entropy_with_logits(logits, labels)
                loss = loss / self.virtual_batch_size
                loss.backward()
                accu_batch += 1
                if self.virtual_batch_size == accu_batch or batch_idx == len(self.loader) - 1:
                    self.optimizer.step()
                    self.scheduler.step()
                    nn.utils.clip_grad_norm_(self.model.parameters(), self.max_gradient_norm)
                    self.optimizer.zero_grad()
                    accu_batch = 0

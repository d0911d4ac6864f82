"""A policy trainer exposing forward_backward() and optim_step() separately; the caller runs
forward_backward() once per micro-batch, and forward_backward() clears the gradients first."""
import torch
from torch import nn


class PolicyTrainer:
    def __init__(self) -> None:
        self.model = nn.Linear(16, 4)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-5)

    def forward_backward(self, batch, targets, num_microbatches):
        logits = self.model(batch)
        loss = nn.functional.cross_entropy(logits, targets) / num_microbatches
        loss.backward()
        return loss.detach()

    def optim_step(self):
        self.optimizer.step()
        self.optimizer.zero_grad()


trainer = PolicyTrainer()
for step in range(100):
    for micro in range(4):
        trainer.forward_backward(torch.randn(8, 16), torch.randint(0, 4, (8,)), 4)
    trainer.optim_step()

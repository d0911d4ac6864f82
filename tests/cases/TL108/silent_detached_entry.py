import torch
from torch import nn


class Trainer:
    """The step's output dict is kept once its loss, the entry that was backpropagated, is
    replaced by a detached copy."""

    def __init__(self, module: nn.Module, optimizer: torch.optim.Optimizer) -> None:
        self.module = module
        self.optimizer = optimizer

    def train_epoch(self, loader):
        outputs = []
        for i, batch in enumerate(loader):
            self.optimizer.zero_grad()
            output = self.module.training_step(batch, i)
            output["loss"].backward()
            self.optimizer.step()
            output["loss"] = output["loss"].detach()
            outputs.append(output)
        return outputs

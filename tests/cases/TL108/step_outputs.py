import torch
from torch import nn


class Trainer:
    """A trainer that keeps each step's output dict for the epoch's end."""

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
            outputs.append(output)  # expect: TL108
        return outputs

    def train_epoch_detaching_another_entry(self, loader):
        outputs = []
        for i, batch in enumerate(loader):
            self.optimizer.zero_grad()
            output = self.module.training_step(batch, i)
            output["loss"].backward()
            self.optimizer.step()
            output["metrics"] = output["metrics"].detach()  # not the entry that was backpropagated
            outputs.append(output)  # expect: TL108
        return outputs

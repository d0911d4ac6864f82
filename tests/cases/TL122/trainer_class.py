# A trainer whose validation method puts the network back in train mode per batch.
import torch
from torch import nn


class Trainer:
    def __init__(self, net: nn.Module, valid_loader):
        self.net = net
        self.valid_loader = valid_loader

    def validate(self):
        self.net.eval()
        total = 0.0
        with torch.no_grad():
            for batch, target in self.valid_loader:
                self.net.train()  # expect: TL122
                total += nn.functional.l1_loss(self.net(batch), target).item()
        return total

# Near-misses of a pipeline schedule: the function or its class holds an optimizer (or the
# module builds one), so a loop of backward passes without a step is a forgotten step.
import torch
from torch import nn

model = nn.Linear(8, 8)
optimizer = torch.optim.AdamW(model.parameters())


def run_epoch(loader):
    for batch in loader:
        loss = model(batch).sum()
        loss.backward()  # expect: TL101


class Trainer:
    def __init__(self, net):
        self.net = net
        self.opt = torch.optim.SGD(net.parameters(), lr=0.1)

    def train_epoch(self, loader):
        for batch in loader:
            self.net(batch).mean().backward()  # expect: TL101


class FineTuner(Trainer):
    def train_more(self, loader):
        for batch in loader:
            self.net(batch).mean().backward()  # expect: TL101

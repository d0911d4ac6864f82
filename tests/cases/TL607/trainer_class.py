# A trainer class accumulating over micro-batches: the sync switch comes after the forward.
import torch
from torch.nn.parallel import DistributedDataParallel as DDP


class Trainer:
    def __init__(self, model: torch.nn.Module, loader, accumulation: int):
        self.model = DDP(model)
        self.optimizer = torch.optim.AdamW(self.model.parameters())
        self.loader = loader
        self.accumulation = accumulation

    def train_epoch(self):
        for index, (inputs, targets) in enumerate(self.loader):
            outputs = self.model(inputs)
            loss = torch.nn.functional.cross_entropy(outputs, targets) / self.accumulation
            last = (index + 1) % self.accumulation == 0
            self.model.require_backward_grad_sync = last  # expect: TL607
            loss.backward()
            if last:
                self.optimizer.step()
                self.optimizer.zero_grad()

    def train_epoch_no_sync(self):
        for index, (inputs, targets) in enumerate(self.loader):
            loss = torch.nn.functional.cross_entropy(self.model(inputs), targets)
            if (index + 1) % self.accumulation != 0:
                with self.model.no_sync():  # expect: TL607
                    loss.backward()
                continue
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()

import torch
from torch import nn


class Trainer:
    def __init__(self, model: nn.Module, accumulate: int = 4) -> None:
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.scheduler = torch.optim.lr_scheduler.StepLR(self.optimizer, step_size=10)
        self.accumulate = accumulate

    def fit(self, loader):
        for step, (x, y) in enumerate(loader):
            self.model.zero_grad()
            self.optimizer.zero_grad()  # expect: TL111
            loss = nn.functional.mse_loss(self.model(x), y) / self.accumulate
            loss.backward()
            if step % self.accumulate == self.accumulate - 1:
                self.optimizer.step()
                self.scheduler.step()

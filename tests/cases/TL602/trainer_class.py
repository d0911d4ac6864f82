import torch
from accelerate import Accelerator


class Trainer:
    def __init__(self, model, optimizer, loader):
        self.accelerator = Accelerator(mixed_precision="bf16")
        self.model, self.optimizer, self.loader = self.accelerator.prepare(
            model, optimizer, loader
        )

    def fit(self, epochs):
        for epoch in range(epochs):
            for x, y in self.loader:
                self.optimizer.zero_grad()
                loss = torch.nn.functional.mse_loss(self.model(x), y)
                loss.backward()  # expect: TL602
                self.optimizer.step()
                self.accelerator.log({"loss": loss.detach()})

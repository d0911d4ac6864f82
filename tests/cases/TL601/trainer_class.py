import torch
from accelerate import Accelerator


class Trainer:
    def __init__(self, model, optimizer, loader):
        self.accelerator = Accelerator()
        self.model, self.optimizer, self.loader = self.accelerator.prepare(
            model, optimizer, loader
        )

    def gather_losses(self, loss):
        return self.accelerator.gather(loss.detach()).mean()

    def fit(self, epochs):
        for epoch in range(epochs):
            for x, y in self.loader:
                self.optimizer.zero_grad()
                loss = torch.nn.functional.mse_loss(self.model(x), y)
                self.accelerator.backward(loss)
                self.optimizer.step()
            if self.accelerator.is_main_process:
                self.accelerator.wait_for_everyone()  # expect: TL601
                mean = self.gather_losses(loss)  # expect: TL601
                self.accelerator.save_state("checkpoints")

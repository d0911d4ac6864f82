"""An MLP trainer that adds float(loss) to the epoch total on every step."""
import torch
from torch import nn


class Trainer:
    def __init__(self, model, train_dl, epochs=10, device="cuda"):
        self.dev = device
        self.model = model.to(device)
        self.train_dl = train_dl
        self.epochs = epochs
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=2e-3)
        self.loss_fn = nn.HuberLoss()

    def train(self):
        for epoch in range(self.epochs):
            epoch_loss_sum = torch.zeros((), device=self.dev)
            cnt = 0
            for xb, yb in self.train_dl:
                xb, yb = xb.to(self.dev, non_blocking=True), yb.to(self.dev, non_blocking=True)
                self.optimizer.zero_grad()
                loss = self.loss_fn(self.model(xb), yb)
                loss.backward()
                self.optimizer.step()
                epoch_loss_sum += loss.detach()
                cnt += 1
            print(epoch, float(epoch_loss_sum) / max(cnt, 1))

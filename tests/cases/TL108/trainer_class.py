import torch
from torch import nn


class Trainer:
    def __init__(self, model: nn.Module, loader):
        self.model = model
        self.loader = loader
        self.criterion = nn.MSELoss()
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        self.train_losses = []

    def step(self, loss):
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

    def train_epoch(self):
        total = 0
        for x, y in self.loader:
            out = self.model(x)
            loss = self.criterion(out, y)
            self.step(loss)
            total += loss  # expect: TL108
            self.train_losses.append(loss)  # expect: TL108
        return total / len(self.loader)

    def fit(self, epochs):
        for epoch in range(epochs):
            print(epoch, self.train_epoch())

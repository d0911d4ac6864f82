import torch
from torch import nn, optim


class Trainer:
    def __init__(self, model: nn.Module, loader):
        self.model = model
        self.loader = loader
        self.optimizer = optim.AdamW(model.parameters(), lr=1e-3)
        self.criterion = nn.CrossEntropyLoss()

    def training_step(self, batch):
        inputs, targets = batch
        loss = self.criterion(self.model(inputs), targets)
        loss.backward()  # expect: TL101
        return loss

    def fit(self, epochs):
        for epoch in range(epochs):
            for batch in self.loader:
                self.optimizer.zero_grad()
                self.training_step(batch)

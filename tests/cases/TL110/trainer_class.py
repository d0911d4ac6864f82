import torch
from torch import nn


class Trainer:
    def __init__(self, model: nn.Module, loader):
        self.model = model
        self.loader = loader
        self.criterion = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    @torch.no_grad()
    def compute_loss(self, batch):
        inputs, labels = batch
        return self.criterion(self.model(inputs), labels)

    def train_step(self, batch):
        loss = self.compute_loss(batch)
        self.optimizer.zero_grad()
        loss.backward()  # expect: TL110
        self.optimizer.step()

    def fit(self, epochs):
        for epoch in range(epochs):
            for batch in self.loader:
                self.train_step(batch)

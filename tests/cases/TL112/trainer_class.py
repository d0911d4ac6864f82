import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self, in_dim, num_classes):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(in_dim, 128), nn.GELU())
        self.head = nn.Linear(128, num_classes)

    def forward(self, x):
        return self.head(self.body(x))


class Trainer:
    def __init__(self, loader, in_dim=64, num_classes=5):
        self.model = Classifier(in_dim, num_classes)
        self.loader = loader
        self.criterion = nn.NLLLoss()
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-3)

    def training_step(self, x, y):
        loss = self.criterion(self.model(x), y)  # expect: TL112
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.detach()

    def fit(self, epochs):
        for epoch in range(epochs):
            for x, y in self.loader:
                self.training_step(x, y)

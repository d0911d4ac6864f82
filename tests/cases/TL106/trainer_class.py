import torch
from torch import nn


class Trainer:
    def __init__(self, model: nn.Module, train_loader, val_loader, lr=3e-4):
        self.model = model
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.criterion = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr)

    def train_epoch(self):
        self.model.train()
        for x, y in self.train_loader:
            self.optimizer.zero_grad()
            loss = self.criterion(self.model(x), y)
            loss.backward()
            self.optimizer.step()

    def validate(self):
        self.model.eval()
        losses = []
        for x, y in self.val_loader:
            out = self.model(x)  # expect: TL106
            losses.append(self.criterion(out, y).item())
        return sum(losses) / len(losses)

    def fit(self, epochs):
        best = float("inf")
        for epoch in range(epochs):
            self.train_epoch()
            val_loss = self.validate()
            if val_loss < best:
                best = val_loss
                torch.save(self.model.state_dict(), "best.pt")

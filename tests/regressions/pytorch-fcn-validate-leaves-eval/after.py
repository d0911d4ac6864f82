"""Trainer validates every few iterations inside train_epoch(); validate() leaves self.model in eval mode."""
import torch
import torch.nn.functional as F
from torch import nn


class SegNet(nn.Module):
    def __init__(self, n_class=3):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.drop = nn.Dropout2d(0.5)
        self.score = nn.Conv2d(16, n_class, 1)

    def forward(self, x):
        return self.score(self.drop(F.relu(self.conv(x))))


class Trainer:
    def __init__(self, model, optim, train_loader, val_loader, max_iter, interval_validate=10):
        self.model = model
        self.optim = optim
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.max_iter = max_iter
        self.interval_validate = interval_validate
        self.iteration = 0
        self.epoch = 0

    def validate(self):
        training = self.model.training
        self.model.eval()
        total = 0.0
        with torch.no_grad():
            for data, target in self.val_loader:
                total += F.cross_entropy(self.model(data), target).item()
        print("iter", self.iteration, "val loss", total / len(self.val_loader))
        if training:
            self.model.train()

    def train_epoch(self):
        self.model.train()
        for batch_idx, (data, target) in enumerate(self.train_loader):
            self.iteration = batch_idx + self.epoch * len(self.train_loader)
            if self.iteration % self.interval_validate == 0:
                self.validate()
            self.optim.zero_grad()
            loss = F.cross_entropy(self.model(data), target)
            loss.backward()
            self.optim.step()
            if self.iteration >= self.max_iter:
                break

    def train(self, max_epoch):
        for epoch in range(max_epoch):
            self.epoch = epoch
            self.train_epoch()
            if self.iteration >= self.max_iter:
                break


if __name__ == "__main__":
    def batch():
        return torch.randn(2, 3, 16, 16), torch.randint(0, 3, (2, 16, 16))

    net = SegNet()
    trainer = Trainer(net, torch.optim.SGD(net.parameters(), lr=1e-3),
                      [batch() for _ in range(30)], [batch() for _ in range(4)], max_iter=100)
    trainer.train(max_epoch=5)

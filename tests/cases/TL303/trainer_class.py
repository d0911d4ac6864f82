import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Trainer:
    def __init__(self, model: nn.Module, train_ds: Dataset, batch_size=64):
        self.model = model.cuda()
        self.train_loader = DataLoader(train_ds, batch_size=batch_size, shuffle=True, drop_last=True)  # expect: TL303
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def train_epoch(self):
        self.model.train()
        for x, y in self.train_loader:
            x, y = x.cuda(), y.cuda()
            loss = nn.functional.mse_loss(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def fit(self, epochs):
        for epoch in range(epochs):
            self.train_epoch()

import torch
from torch import nn


class Trainer:
    def __init__(self, model: nn.Module, loader, epochs: int):
        self.model = model
        self.loader = loader
        self.epochs = epochs
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.05)
        self.scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(self.optimizer, T_max=epochs)

    def update_weights(self, loss):
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

    def train_epoch(self):
        for batch, labels in self.loader:
            loss = nn.functional.cross_entropy(self.model(batch), labels)
            self.update_weights(loss)

    def fit(self):
        for epoch in range(self.epochs):
            self.scheduler.step()  # expect: TL107
            self.train_epoch()
            print(epoch, self.scheduler.get_last_lr())

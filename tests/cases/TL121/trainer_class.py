# A trainer class whose epoch method clears and steps but lost its backward in a refactor.
import torch
from torch import nn


class Trainer:
    def __init__(self, model: nn.Module, loader):
        self.model = model
        self.loader = loader
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        self.criterion = nn.CrossEntropyLoss()

    def train_epoch(self):
        self.model.train()
        for images, labels in self.loader:
            self.optimizer.zero_grad()
            logits = self.model(images)
            loss = self.criterion(logits, labels)
            self.optimizer.step()  # expect: TL121

# A forward that returns probabilities only outside training returns logits while it trains.
import torch
from torch import nn


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 1)
        self.criterion = nn.BCEWithLogitsLoss()

    def forward(self, x):
        out = self.fc(x)
        if not self.training:
            return torch.sigmoid(out)
        return out

    def training_step(self, batch, batch_idx):
        x, y = batch
        return self.criterion(self(x), y)

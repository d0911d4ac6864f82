# A module whose own forward ends in a sigmoid, trained through a loss attribute and a helper.
import torch
import torch.nn.functional as F
from torch import nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 1)
        self.criterion = nn.BCEWithLogitsLoss()
        self.loss_func = F.binary_cross_entropy_with_logits

    def forward(self, x):
        return torch.sigmoid(self.fc(x))

    def loss(self, logits, labels):
        return self.loss_func(logits, labels)  # expect: TL114

    def training_step(self, batch, batch_idx):
        x, y = batch
        out = self(x)
        return self.criterion(out, y) + self.loss(self.forward(x), y)  # expect: TL114

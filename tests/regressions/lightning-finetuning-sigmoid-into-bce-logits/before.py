"""A fine-tuning module whose forward ends in a sigmoid, trained with the logits version of BCE."""
import torch
import torch.nn.functional as F
from torch import nn


class TransferModel(nn.Module):
    def __init__(self, features=16):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(features, 32), nn.ReLU())
        self.fc = nn.Linear(32, 1)
        self.loss_func = F.binary_cross_entropy_with_logits

    def forward(self, x):
        x = self.fc(self.backbone(x))
        return torch.sigmoid(x)

    def loss(self, logits, labels):
        return self.loss_func(input=logits, target=labels)

    def training_step(self, batch, batch_idx):
        x, y = batch
        y_logits = self.forward(x)
        y_true = y.view((-1, 1)).type_as(x)
        return self.loss(y_logits, y_true)

import torch
import torch.nn.functional as F
from torch import nn


class ConvNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.classifier = nn.Linear(32, num_classes)

    def forward(self, x):
        x = self.features(x).flatten(1)
        if self.training:
            return self.classifier(x)
        return self.classifier(x)


def train_one_epoch(model, loader, optimizer):
    for images, targets in loader:
        optimizer.zero_grad()
        loss = F.nll_loss(model(images), targets, reduction="mean")  # expect: TL112
        loss.backward()
        optimizer.step()


model = ConvNet()
optimizer = torch.optim.Adam(model.parameters())
train_one_epoch(model, [], optimizer)

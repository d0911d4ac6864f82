import torch
import torch.nn.functional as F
from torch import nn


class Net(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 32, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(32, num_classes)

    def forward(self, x):
        x = self.features(x).flatten(1)
        return F.softmax(self.fc(x), dim=1)


def compute_loss(logits, targets):
    probs = logits.softmax(dim=-1)
    return F.cross_entropy(probs, targets)  # expect: TL109


def train_one_epoch(model, loader, optimizer):
    for images, targets in loader:
        outputs = model(images)
        loss = F.cross_entropy(outputs, targets, label_smoothing=0.1)  # expect: TL109
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main(loader):
    model = Net()
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(10):
        train_one_epoch(model, loader, optimizer)


def finetune(model, loader, optimizer):
    for x, y in loader:
        loss = compute_loss(model.fc(model.features(x).flatten(1)), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

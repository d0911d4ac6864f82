"""A two-branch spoof detector: a score head and a depth map, the score trained with a focal
loss built on the logits version of BCE."""
import torch
import torch.nn.functional as F
from torch import nn


class FocalLoss(nn.Module):
    def __init__(self, gamma=2.0):
        super().__init__()
        self.gamma = gamma

    def forward(self, inputs, targets):
        bce = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
        pt = torch.exp(-bce)
        return ((1 - pt) ** self.gamma * bce).mean()


class Detector(nn.Module):
    def __init__(self, features=32):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(features, 64), nn.ReLU())
        self.depth = nn.Linear(64, 16)
        self.cls = nn.Linear(64, 1)

    def forward(self, x):
        h = self.body(x)
        score = self.cls(h)
        score = torch.sigmoid(score)
        return score, self.depth(h)


def train(loader, epochs=3):
    model = Detector()
    focal = FocalLoss()
    depth_loss = nn.SmoothL1Loss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(epochs):
        model.train()
        for images, labels, depth in loader:
            optimizer.zero_grad()
            pred, depth_pred = model(images)
            pred = torch.squeeze(pred)
            loss = focal(pred.float(), labels.float()) + depth_loss(depth_pred, depth)
            loss.backward()
            optimizer.step()

# A detector whose forward returns a (sigmoid score, depth map) tuple; the score is reshaped
# with torch.squeeze before the loss: still the sigmoid's output, still item 0 of the tuple.
import torch
import torch.nn.functional as F
from torch import nn


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(16, 32)
        self.cls = nn.Linear(32, 1)
        self.depth = nn.Linear(32, 4)

    def forward(self, x):
        h = self.body(x)
        score = torch.sigmoid(self.cls(h))
        return score, self.depth(h)


def train(loader):
    model = Detector()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for x, y, depth in loader:
        optimizer.zero_grad()
        pred, depth_pred = model(x)
        pred = torch.squeeze(pred)
        loss = F.binary_cross_entropy_with_logits(pred.float(), y)  # expect: TL114
        loss = loss + F.mse_loss(depth_pred, depth)
        loss.backward()
        optimizer.step()


def train_depth_logits(loader):
    # near-miss: the reshaped item is the depth map, which is no sigmoid
    model = Detector()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for x, y, depth in loader:
        optimizer.zero_grad()
        pred, depth_pred = model(x)
        depth_pred = torch.flatten(depth_pred)
        loss = F.binary_cross_entropy_with_logits(depth_pred, y.flatten())
        loss.backward()
        optimizer.step()

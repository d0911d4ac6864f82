import torch
import torch.nn.functional as F
from torch import nn

from mypackage.models import build_model


class Head(nn.Module):
    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone

    def forward(self, x):
        return self.backbone(x)


def train(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.nll_loss(model(x), y)
        loss.backward()
        optimizer.step()


model = build_model("resnet18")
wrapped = Head(build_model("resnet50"))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
train(model, [], optimizer)
for x, y in []:
    loss = F.nll_loss(wrapped(x), y) + F.nll_loss(torch.log(model(x)), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

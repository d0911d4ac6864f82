import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.body(x)


def train(model, optimizer, loader):
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()


def run(loader, resume):
    model = Net()
    params = filter(lambda p: p.requires_grad, model.parameters())
    optimizer = torch.optim.Adam(params, lr=1e-3)
    if resume:
        model = Net(hidden=64)  # expect: TL123
        model.load_state_dict(torch.load("last.pt", weights_only=True))
    train(model, optimizer, loader)


def prune_and_finetune(model, loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train(model, optimizer, loader)
    model.body[2] = nn.Linear(32, 1)
    model.body = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))  # expect: TL123
    train(model, optimizer, loader)

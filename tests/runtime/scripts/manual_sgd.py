"""No torch.optim: the parameters are updated by hand (`p.data.add_`), with a learning rate from
the command line (`--lr 0` updates nothing)."""

import sys

import torch
from torch import nn

torch.manual_seed(0)
lr = float(sys.argv[sys.argv.index("--lr") + 1]) if "--lr" in sys.argv else 0.5
model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 4))
for step in range(2000):
    x, y = torch.randn(16, 8), torch.randint(0, 4, (16,))  # a fresh batch every step
    model.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()  # line: backward
    with torch.no_grad():
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)  # line: update

"""A correct loop whose steps are slow (a large model, a busy machine: here a sleep), with a
small learning rate: in a few seconds its loss has only begun to fall."""

import argparse
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=1e-3)
args = parser.parse_args()
torch.manual_seed(0)
data = TensorDataset(torch.randn(256, 8), torch.randint(0, 4, (256,)))
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)  # line: optimizer
for epoch in range(100):
    for x, y in DataLoader(data, batch_size=32, shuffle=True):
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
        time.sleep(0.3)

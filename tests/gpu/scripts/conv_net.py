"""A small conv net on CUDA, fed by a DataLoader: `--pin 0|1` (pin_memory), `--non-blocking
0|1` (how the batch is copied)."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--pin", type=int, default=1)
parser.add_argument("--non-blocking", type=int, default=1)
args = parser.parse_args()
torch.manual_seed(0)
device = torch.device("cuda")
data = TensorDataset(torch.randn(4096, 3, 32, 32), torch.randint(0, 10, (4096,)))
loader = DataLoader(data, batch_size=128, shuffle=True, pin_memory=bool(args.pin))  # line: loader
model = nn.Sequential(
    nn.Conv2d(3, 64, 3, padding=1),
    nn.BatchNorm2d(64),
    nn.ReLU(),
    nn.Conv2d(64, 128, 3, padding=1),
    nn.BatchNorm2d(128),
    nn.ReLU(),
    nn.MaxPool2d(2),
    nn.Conv2d(128, 256, 3, padding=1),
    nn.BatchNorm2d(256),
    nn.ReLU(),
    nn.MaxPool2d(2),
    nn.Flatten(),
    nn.Linear(256 * 8 * 8, 10),
).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for _epoch in range(100):
    for x, y in loader:
        x = x.to(device, non_blocking=bool(args.non_blocking))  # line: copy
        y = y.to(device, non_blocking=bool(args.non_blocking))
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

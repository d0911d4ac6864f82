"""zero_grad() is never called, and the gradients are clipped before each step (as in an LSTM
language model): every step still adds to the gradients of all earlier ones."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--zero-grad", action="store_true")
args = parser.parse_args()
torch.manual_seed(0)
loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.randn(64, 1)), batch_size=16)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
for _epoch in range(100):
    for x, y in loader:
        if args.zero_grad:
            optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.05)  # always clips: the norm is larger
        optimizer.step()  # line: step

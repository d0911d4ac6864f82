"""A correct loop whose steps are slow, with a small learning rate: in a few seconds its loss
has only begun to fall. `--wait cpu` (default) makes each step cost CPU time of the training
thread (a large model; `--cost` seconds, 0.3 by default); `--wait sleep` costs wall time only (what a busy machine does to a
step: the CPU time stays small while the clock runs)."""

import argparse
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=1e-3)
parser.add_argument("--wait", choices=("cpu", "sleep"), default="cpu")
parser.add_argument("--cost", type=float, default=0.3, help="seconds each step waits")
args = parser.parse_args()


def wait(seconds: float) -> None:
    if args.wait == "sleep":
        time.sleep(seconds)
        return
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


torch.manual_seed(0)
data = TensorDataset(torch.randn(256, 8), torch.randint(0, 4, (256,)))
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)  # line: optimizer
for epoch in range(100):
    for x, y in DataLoader(data, batch_size=32, shuffle=True):
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
        wait(args.cost)

import argparse

import torch
import torch.nn.functional as F
from torch import nn


class ProbabilityHead(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        return F.softmax(self.fc(x), dim=-1)


class LogitHead(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        return self.fc(x)


parser = argparse.ArgumentParser()
parser.add_argument("--calibrated", action="store_true")
parser.add_argument("--smoothing", type=float, default=0.0)
args = parser.parse_args()

# built on one side of an `if`, then rebuilt on every path: only the logit head is trained
if args.calibrated:
    head = ProbabilityHead()
else:
    head = LogitHead()
head = LogitHead()
optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
batches = [(torch.randn(16, 64), torch.randint(0, 10, (16,)))] * 4

for x, y in batches:
    optimizer.zero_grad()
    out = head(x)
    if args.smoothing:
        # this path normalises and uses a loss made for probabilities...
        out = out.softmax(dim=-1)
        loss = F.nll_loss(out.clamp_min(1e-8).log(), y)
    else:
        # ...and this one never saw that softmax: `out` is still the logits here
        loss = F.cross_entropy(out, y)
    loss.backward()
    optimizer.step()

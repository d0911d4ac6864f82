"""A classifier whose forward ends in log_softmax, trained with nll_loss. `--exp` passes the
probabilities (`output.exp()`) instead of the log-probabilities: no softmax call to watch, but
every row is non-negative and sums to 1."""

import sys

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.randint(0, 4, (64,))), batch_size=16)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4), nn.LogSoftmax(dim=1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(100):
    for x, y in loader:
        optimizer.zero_grad()
        output = model(x)
        if "--exp" in sys.argv:
            output = output.exp()
        loss = F.nll_loss(output, y)  # line: loss
        loss.backward()
        optimizer.step()

"""Copies to another device in the training step, and syncs PyTorch reports, on the CPU.

The CPU has no accelerator to copy to, so the copies go to the `meta` device (recorded per
line like a copy to CUDA, never a finding), and the synchronisation is the warning
`torch.cuda.set_sync_debug_mode("warn")` emits on CUDA, raised here on the line of a `.item()` (which the static rule TL301 flags)."""

import warnings

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
loader = DataLoader(TensorDataset(torch.randn(256, 8), torch.randint(0, 4, (256,))), batch_size=8)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
SYNC_WARNING = "called a synchronizing CUDA operation"  # what PyTorch says on CUDA


running = 0.0
for _epoch in range(50):
    for x, y in loader:
        shadow = x.to("meta", non_blocking=True)  # line: copy_non_blocking
        labels = y.to("meta")  # line: copy_blocking
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        # on CUDA `.item()` here synchronises; on the CPU the warning stands in for PyTorch's
        running += loss.item(); warnings.warn(SYNC_WARNING, stacklevel=1)  # line: reported_sync

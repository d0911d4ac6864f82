"""Host synchronisations in a CUDA training step, one of each kind: `.item()` (timed),
a boolean mask (reported by set_sync_debug_mode) and `torch.cuda.synchronize()` (timed)."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
device = torch.device("cuda")
data = TensorDataset(torch.randn(4096, 256), torch.randint(0, 4, (4096,)))
loader = DataLoader(data, batch_size=256, pin_memory=True)
model = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 4)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
running = 0.0
for _epoch in range(100):
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        logits = model(x)
        loss = nn.functional.cross_entropy(logits, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        confident = logits[logits.max(dim=1).values > 0.5]  # line: mask
        running += loss.item()  # line: item
        torch.cuda.synchronize()  # line: synchronize

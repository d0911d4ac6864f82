"""The learning rate is set by hand every step with a long linear warm-up (as nanoGPT does):
the configured rate is 3e-3, the first step's is 3e-3 / 1000."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
loader = DataLoader(
    TensorDataset(torch.randn(512, 8), torch.randint(0, 4, (512,))), batch_size=32, shuffle=True
)
model = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 4))
learning_rate, warmup = 3e-3, 1000
optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)  # line: optimizer
step = 0
for epoch in range(100):
    for x, y in loader:
        for group in optimizer.param_groups:
            group["lr"] = learning_rate * (step + 1) / warmup if step < warmup else learning_rate
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
        step += 1

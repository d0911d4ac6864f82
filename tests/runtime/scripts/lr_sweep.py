"""A small classifier whose labels follow its inputs, trained with Adam at a sensible lr after a
warm-up that starts far below it (the sweep overrides the schedule)."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
inputs = torch.randn(2048, 8) * 3
labels = (inputs @ torch.randn(8, 4)).argmax(dim=1)
loader = DataLoader(TensorDataset(inputs, labels), batch_size=64, shuffle=True)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)  # line: optimizer
scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=1e-3, total_iters=200)
criterion = nn.CrossEntropyLoss()

for epoch in range(20):
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()  # line: backward
        optimizer.step()
        scheduler.step()
    torch.save(model.state_dict(), "model.pt")

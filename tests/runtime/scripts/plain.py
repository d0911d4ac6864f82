"""A plain training loop: module-level loader, enumerate(), nn.CrossEntropyLoss, Adam."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
data = TensorDataset(torch.randn(256, 8), torch.randint(0, 4, (256,)))
loader = DataLoader(data, batch_size=32, shuffle=True)  # line: loader
model = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 4))  # line: model
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)  # line: optimizer

for epoch in range(100):
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        loss = criterion(model(x), y)  # line: loss
        loss.backward()  # line: backward
        optimizer.step()
        torch.save(model.state_dict(), "checkpoint.pt")  # line: save

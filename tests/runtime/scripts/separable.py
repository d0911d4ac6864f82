"""The near miss of low_accuracy.py: the same start, but the inputs tell the classes apart."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
labels = torch.arange(64) % 4
inputs = nn.functional.one_hot(labels, 8).float()
model = nn.Linear(8, 4)
with torch.no_grad():
    model.weight.zero_()
    model.bias.copy_(torch.tensor([40.0, -40.0, -40.0, -40.0]))
optimizer = torch.optim.Adam(model.parameters(), lr=0.5)
loader = DataLoader(TensorDataset(inputs, labels), batch_size=64)
for epoch in range(1000):
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)  # line: loss
        loss.backward()
        optimizer.step()

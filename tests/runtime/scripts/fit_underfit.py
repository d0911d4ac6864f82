"""Cannot learn: XOR labels and a linear model, which has no capacity for them; both losses
stay at log 2, the loss of predicting both classes with equal probability. The loop also builds
a new training DataLoader every epoch and evaluates on the training data under no_grad (neither
is an extra epoch)."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


def make(n):
    x = torch.randn(n, 2)
    y = ((x[:, 0] > 0) ^ (x[:, 1] > 0)).long()
    return TensorDataset(x, y)


train_set = make(512)
val_loader = DataLoader(make(256), batch_size=64)  # line: val_loader
model = nn.Linear(2, 2)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for epoch in range(100):
    train_loader = DataLoader(train_set, batch_size=32, shuffle=True)
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)  # line: train_loss
        loss.backward()  # line: backward
        optimizer.step()
    with torch.no_grad():
        train_eval = [criterion(model(x), y) for x, y in train_loader]
        val = [criterion(model(x), y) for x, y in val_loader]  # line: val_loss

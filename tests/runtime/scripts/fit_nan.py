"""Goes NaN after a while: a signed square root behind torch.where hides sqrt of a negative
number in the forward pass, not in the backward pass (0 times the NaN gradient of sqrt is NaN).
Once a prediction drops below 0, the weights become NaN and so does every loss after."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
x = torch.randn(512, 4)
y = torch.relu(x[:, 0]).sqrt()
train_loader = DataLoader(TensorDataset(x[:384], y[:384]), batch_size=32, shuffle=True)
val_loader = DataLoader(TensorDataset(x[384:], y[384:]), batch_size=64)
model = nn.Linear(4, 1)
with torch.no_grad():
    model.bias.fill_(2.0)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)


def predict(inputs):
    pred = model(inputs).squeeze(1)
    return torch.where(pred > 0, torch.sqrt(pred), pred)  # line: sqrt


for epoch in range(100):
    for inputs, target in train_loader:
        optimizer.zero_grad()
        loss = F.mse_loss(predict(inputs), target)
        loss.backward()  # line: backward
        optimizer.step()
    with torch.no_grad():
        val = sum(F.mse_loss(predict(inputs), target) for inputs, target in val_loader)

"""A step loop that tests every 100 steps; test() puts the model in eval mode for good. As in the
original script, the name of the imported model module is rebound to the model instance."""
import torch
from torch import nn

import model

model = model.RecurrentNet(2, 128, 1)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.MSELoss()


def get_batch(n):
    x = torch.rand(n, 100, 2)
    return x, x[:, :, 0].sum(dim=1, keepdim=True)


def test():
    model.eval()
    with torch.no_grad():
        x, y = get_batch(1000)
        loss = criterion(model(x), y)
    return loss.item()


def train(max_steps=60_000):
    model.train()
    for i in range(max_steps):
        x, y = get_batch(50)
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        if i % 100 == 0 and i != 0:
            print("test mse", test())


if __name__ == "__main__":
    train()

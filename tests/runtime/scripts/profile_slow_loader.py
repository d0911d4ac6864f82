"""A dataset that takes its time: each sample costs a millisecond to 'decode'."""

import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class SlowImages(Dataset):
    def __init__(self):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(512, 16, generator=g)
        self.y = torch.randint(0, 4, (512,), generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        time.sleep(0.001)  # decoding and augmentation
        return self.x[i], self.y[i]


loader = DataLoader(SlowImages(), batch_size=16, shuffle=True)  # line: loader
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _epoch in range(100):
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()

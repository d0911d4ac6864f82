"""A while loop with iter()/next() and a StopIteration restart, dict batches mutated in place,
gradient accumulation over 2 micro-batches, gradient clipping and a hand-written MSE."""

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Pairs(Dataset):
    def __init__(self):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(128, 6, generator=g)
        self.y = torch.randn(128, 1, generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"input": self.x[i], "target": self.y[i]}


torch.manual_seed(0)
loader = DataLoader(Pairs(), batch_size=16, shuffle=True)  # line: loader
model = nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
accumulate = 2
step = 0
it = iter(loader)
while step < 10_000:
    for _ in range(accumulate):
        try:
            batch = next(it)
        except StopIteration:
            it = iter(loader)
            batch = next(it)
        batch["input"] = batch["input"] * 2.0  # mutated in place, as augmentations do
        out = model(batch["input"])
        loss = ((out - batch["target"]) ** 2).mean() / accumulate
        loss.backward()  # line: backward
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad()
    step += 1

# Steps in loops that are not one training step per iteration: over optimizers after the
# caller's backward, a guarded step, a step of a helper whose caller ran the backward.
import torch
from torch import nn

model = nn.Linear(4, 2)
optimizers = [torch.optim.SGD(model.parameters(), lr=0.1)]
loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(4)]


def step_all():
    for optimizer in optimizers:
        optimizer.step()
        optimizer.zero_grad()


def optimizer_step(optimizer, loader_len):
    for _ in range(1):
        optimizer.step()


for x, y in loader:
    nn.functional.cross_entropy(model(x), y).backward()
    step_all()

for i, (x, y) in enumerate(loader):
    loss = nn.functional.cross_entropy(model(x), y)
    if loss.isfinite():
        optimizers[0].step()

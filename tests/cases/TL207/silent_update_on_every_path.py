# The skip leaves out the step only, or updates in both branches, or the skip test comes
# before the unscale, or the loop ends on the bad path.
import torch
from torch import nn

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(4)]


def backward(x, y):
    optimizer.zero_grad()
    scaler.scale(nn.functional.cross_entropy(model(x), y)).backward()


for x, y in loader:
    backward(x, y)
    scaler.unscale_(optimizer)
    norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    if torch.isfinite(norm):
        scaler.step(optimizer)
    scaler.update()

for x, y in loader:
    backward(x, y)
    scaler.unscale_(optimizer)
    norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    if not torch.isfinite(norm):
        scaler.update()
        continue
    scaler.step(optimizer)
    scaler.update()

for x, y in loader:
    backward(x, y)
    scaler.unscale_(optimizer)
    norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    if norm > 100:
        raise RuntimeError("diverged")
    scaler.step(optimizer)
    scaler.update()

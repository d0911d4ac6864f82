# The skip test is taken before the unscale and governs both; a configuration switch.
import torch
from torch import nn

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
use_amp = True
loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(4)]

for x, y in loader:
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    if torch.isfinite(loss):
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()

for x, y in loader:
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    if use_amp:
        scaler.step(optimizer)
        scaler.update()
    else:
        optimizer.step()

for x, y in loader:
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    skip = not torch.isfinite(loss)
    if not skip:
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    if not skip:
        scaler.step(optimizer)
        scaler.update()

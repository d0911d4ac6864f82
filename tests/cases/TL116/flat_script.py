# Accumulation over four micro-batches; the clip runs after each backward, outside the guard.
import torch
from torch import nn

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(2, 4), torch.randn(2, 1)) for _ in range(16)]
accumulation_steps = 4

for i, (x, y) in enumerate(loader):
    loss = nn.functional.mse_loss(model(x), y) / accumulation_steps
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # expect: TL116
    if (i + 1) % accumulation_steps == 0:
        optimizer.step()
        optimizer.zero_grad()

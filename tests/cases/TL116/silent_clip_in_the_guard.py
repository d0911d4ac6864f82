# The clip sits with the step, once per window; a norm measured per micro-batch for a log
# under a periodic guard of its own; a loop that steps every iteration.
import torch
from torch import nn

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(2, 4), torch.randn(2, 1)) for _ in range(16)]
accumulation_steps = 4

for i, (x, y) in enumerate(loader):
    (nn.functional.mse_loss(model(x), y) / accumulation_steps).backward()
    if (i + 1) % accumulation_steps == 0:
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()

for x, y in loader:
    optimizer.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()

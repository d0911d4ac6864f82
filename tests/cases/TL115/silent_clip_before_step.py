# Clipping between the backward and the step; a norm measured after the step for a log.
import math

import torch
from torch import nn

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in [(torch.randn(2, 4), torch.randn(2, 1))]:
    optimizer.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    grad_norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    nn.utils.clip_grad_norm_(model.parameters(), math.inf)
    print(grad_norm)

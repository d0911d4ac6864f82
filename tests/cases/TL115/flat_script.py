# A flat script that clips after the step; the next iteration clears the clipped gradients.
import torch
from torch import nn

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(2, 4), torch.randn(2, 1)) for _ in range(10)]

for epoch in range(3):
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # expect: TL115

# No gradients are ever cleared here: the clip after the step shapes what the next step adds
# to (TL102 speaks about the missing zero_grad, not this rule).
import torch
from torch import nn

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in [(torch.randn(2, 4), torch.randn(2, 1))]:
    nn.functional.mse_loss(model(x), y).backward()
    optimizer.step()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)

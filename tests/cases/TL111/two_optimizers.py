# Both optimizers of a distillation loop are cleared on every micro-batch, and both step only
# every `accumulation_steps` batches.
import torch
import torch.nn.functional as F
from torch import nn

projector = nn.Linear(32, 32)
student = nn.Linear(32, 32)
opt_proj = torch.optim.Adam(projector.parameters(), lr=1e-3)
opt_student = torch.optim.Adam(student.parameters(), lr=1e-3)
accumulation_steps = 4
loader = [torch.randn(8, 32) for _ in range(64)]

for i, features in enumerate(loader):
    loss = F.mse_loss(student(projector(features)), features) / accumulation_steps
    opt_proj.zero_grad()  # expect: TL111
    opt_student.zero_grad()  # expect: TL111
    loss.backward()
    if (i + 1) % accumulation_steps == 0:
        opt_proj.step()
        opt_student.step()

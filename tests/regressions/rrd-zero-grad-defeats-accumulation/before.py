"""Distillation with two optimizers and gradient accumulation: both are zeroed on every micro-batch."""
import torch
import torch.nn.functional as F
from torch import nn

projector = nn.Linear(32, 32)
student = nn.Linear(32, 32)
opt_proj = torch.optim.Adam(projector.parameters(), lr=1e-3)
opt_student = torch.optim.Adam(student.parameters(), lr=1e-3)
accumulation_steps = 4
loader = [torch.randn(8, 32) for _ in range(64)]

for epoch in range(20):
    for i, features in enumerate(loader):
        projected = projector(features)
        loss = F.mse_loss(student(projected), features) / accumulation_steps
        opt_proj.zero_grad()
        opt_student.zero_grad()
        loss.backward()
        if (i + 1) % accumulation_steps == 0:
            opt_proj.step()
            opt_student.step()

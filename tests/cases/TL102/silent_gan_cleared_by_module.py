# Each optimizer's gradients are cleared: one through its optimizer, the other through its
# module's `zero_grad()`; and a loop that clears with a helper handed the optimizer.
import torch
import torch.nn.functional as F
from torch import nn

encoder = nn.Linear(48, 16)
disc = nn.Linear(48, 1)
optimizer_e = torch.optim.Adam(encoder.parameters(), lr=1e-4)
optimizer_d = torch.optim.Adam(disc.parameters(), lr=1e-4)


def reset(optimizer):
    optimizer.zero_grad(set_to_none=True)


for step in range(5000):
    x = torch.rand(16, 48)
    disc.zero_grad()
    loss_d = F.softplus(-disc(x)).mean()
    loss_d.backward()
    optimizer_d.step()
    optimizer_e.zero_grad()
    loss_e = encoder(x).pow(2).mean()
    loss_e.backward()
    optimizer_e.step()

for step in range(5000):
    x = torch.rand(16, 48)
    reset(optimizer_d)
    F.softplus(-disc(x)).mean().backward()
    optimizer_d.step()
    optimizer_e.zero_grad()
    encoder(x).pow(2).mean().backward()
    optimizer_e.step()

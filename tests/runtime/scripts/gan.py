"""A GAN on 2-d points: the discriminator steps on its own loss (the generator's output
detached), the generator on a loss that runs through the discriminator. `--g-over-d` builds the
generator's optimizer over the discriminator's parameters (one word changed)."""

import sys

import torch
from torch import nn

torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
discriminator = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))
over = discriminator if "--g-over-d" in sys.argv else generator
opt_g = torch.optim.Adam(over.parameters(), lr=1e-3)  # line: opt_g
opt_d = torch.optim.Adam(discriminator.parameters(), lr=1e-3)  # line: opt_d
bce = nn.BCEWithLogitsLoss()
for step in range(3000):
    real = torch.randn(32, 2) * 0.5 + 2.0
    fake = generator(torch.randn(32, 4))
    opt_d.zero_grad()
    d_loss = bce(discriminator(real), torch.ones(32, 1)) + bce(
        discriminator(fake.detach()), torch.zeros(32, 1)
    )
    d_loss.backward()
    opt_d.step()
    opt_g.zero_grad()
    g_loss = bce(discriminator(fake), torch.ones(32, 1))
    g_loss.backward()
    opt_g.step()

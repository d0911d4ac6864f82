"""A GAN whose discriminator takes ten steps before the generator's first (as many public GANs
do), with the generator built after the discriminator's first backward has run."""

import torch
from torch import nn

torch.manual_seed(0)
discriminator = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))
opt_d = torch.optim.SGD(discriminator.parameters(), lr=1e-2, momentum=0.9)
generator = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))  # line: generator
opt_g = torch.optim.SGD(generator.parameters(), lr=1e-2, momentum=0.9)  # line: opt_g
bce = nn.BCEWithLogitsLoss()
for epoch in range(200):
    for _ in range(10):
        opt_d.zero_grad()
        real = torch.randn(32, 2) * 0.5 + 2.0
        bce(discriminator(real), torch.ones(32, 1)).backward()
        fake = generator(torch.randn(32, 4)).detach()
        bce(discriminator(fake), torch.zeros(32, 1)).backward()
        opt_d.step()
    for _ in range(10):
        opt_g.zero_grad()
        g_loss = bce(discriminator(generator(torch.randn(32, 4))), torch.ones(32, 1))
        g_loss.backward()
        opt_g.step()

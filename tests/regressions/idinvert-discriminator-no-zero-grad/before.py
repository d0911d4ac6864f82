"""Encoder + discriminator training: two optimizers, only the encoder's is ever zeroed."""
import torch
import torch.nn.functional as F
from torch import nn

encoder = nn.Sequential(nn.Flatten(), nn.Linear(3 * 16 * 16, 64))
decoder = nn.Sequential(nn.Linear(64, 3 * 16 * 16), nn.Unflatten(1, (3, 16, 16)))
disc = nn.Sequential(nn.Flatten(), nn.Linear(3 * 16 * 16, 1))
optimizer_e = torch.optim.Adam(encoder.parameters(), lr=1e-4)
optimizer_d = torch.optim.Adam(disc.parameters(), lr=1e-4)

for step in range(5000):
    x = torch.rand(16, 3, 16, 16)
    x_rec = decoder(encoder(x))

    loss_real = F.softplus(-disc(x)).mean()
    loss_fake = F.softplus(disc(x_rec.detach())).mean()
    loss_d = loss_real + loss_fake
    loss_d.backward()
    optimizer_d.step()

    optimizer_e.zero_grad()
    loss_e = F.mse_loss(x_rec, x) + F.softplus(-disc(x_rec)).mean()
    loss_e.backward()
    optimizer_e.step()

"""A spectral-norm GAN: the critic's loss is written in one line with `net_G(z)` inside it.
Fixed: `net_G(z).detach()`."""

import torch


def train(net_G, net_D, loader, total_steps, batch_size=64, z_dim=128, n_dis=5):
    optim_G = torch.optim.Adam(net_G.parameters(), lr=2e-4, betas=(0.0, 0.9))
    optim_D = torch.optim.Adam(net_D.parameters(), lr=2e-4, betas=(0.0, 0.9))
    looper = iter(loader)
    for step in range(total_steps):
        for iter_num in range(n_dis):
            real = next(looper)
            optim_D.zero_grad()
            z = torch.randn(batch_size, z_dim)
            loss_D = -net_D(real).mean() + net_D(net_G(z).detach()).mean()
            loss_D.backward()
            optim_D.step()
        optim_G.zero_grad()
        z = torch.randn(batch_size * 2, z_dim)
        loss_G = -net_D(net_G(z)).mean()
        loss_G.backward()
        optim_G.step()

"""A DCGAN/WGAN-GP trainer with one function per player: train_D builds its fakes with G and
feeds them to D attached, so D's backward also runs through G."""

import torch

G = torch.nn.Sequential(torch.nn.ConvTranspose2d(128, 3, 4), torch.nn.Tanh())
D = torch.nn.Sequential(torch.nn.Conv2d(3, 1, 4), torch.nn.Flatten())
G_optimizer = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
D_optimizer = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))


def train_G(batch_size, z_dim):
    z = torch.randn(batch_size, z_dim, 1, 1)
    x_fake = G(z)
    G_loss = -D(x_fake).mean()
    G.zero_grad()
    G_loss.backward()
    G_optimizer.step()
    return {"g_loss": G_loss}


def train_D(x_real, z_dim):
    z = torch.randn(x_real.shape[0], z_dim, 1, 1)
    x_fake = G(z)
    D_loss = D(x_fake).mean() - D(x_real).mean()
    D.zero_grad()
    D_loss.backward()
    D_optimizer.step()
    return {"d_loss": D_loss}


def main(data_loader, epochs, n_d=1, z_dim=128):
    it_d = 0
    for ep in range(epochs):
        for x_real in data_loader:
            train_D(x_real, z_dim)
            it_d += 1
            if it_d % n_d == 0:
                train_G(x_real.shape[0], z_dim)

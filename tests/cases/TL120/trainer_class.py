# A GAN trainer class: the critic's loss on `self.net_G(z)` directly.
import torch


class Trainer:
    def __init__(self, net_G, net_D):
        self.net_G, self.net_D = net_G, net_D
        self.optim_G = torch.optim.Adam(self.net_G.parameters(), lr=2e-4, betas=(0.0, 0.9))
        self.optim_D = torch.optim.Adam(self.net_D.parameters(), lr=2e-4, betas=(0.0, 0.9))

    def train(self, loader, z_dim=128):
        for real in loader:
            z = torch.randn(real.shape[0], z_dim)
            self.optim_D.zero_grad()
            loss_D = -self.net_D(real).mean() + self.net_D(self.net_G(z)).mean()
            loss_D.backward()  # expect: TL120
            self.optim_D.step()
            self.optim_G.zero_grad()
            loss_G = -self.net_D(self.net_G(z)).mean()
            loss_G.backward()
            self.optim_G.step()

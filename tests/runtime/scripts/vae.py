"""A VAE: binary cross-entropy against soft targets (pixel intensities in [0, 1]) summed over
the batch, plus a KL term written by hand. The reconstruction loss has a floor it can never go
below: the entropy of the targets."""

import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
images = torch.rand(256, 64) ** 3  # soft targets, mostly dark
loader = DataLoader(TensorDataset(images), batch_size=32, shuffle=True)


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(64, 128)
        self.mu, self.logvar = nn.Linear(128, 8), nn.Linear(128, 8)
        self.decoder = nn.Sequential(nn.Linear(8, 128), nn.ReLU(), nn.Linear(128, 64))

    def forward(self, x):
        h = F.relu(self.encoder(x))
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return torch.sigmoid(self.decoder(z)), mu, logvar


model = VAE()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(500):
    for (x,) in loader:
        optimizer.zero_grad()
        recon, mu, logvar = model(x)
        bce = F.binary_cross_entropy(recon, x, reduction="sum")  # line: bce
        kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        (bce + kld).backward()
        optimizer.step()

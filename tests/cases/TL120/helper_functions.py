# The discriminator's step in a helper over global networks.
import torch

G = torch.nn.Linear(16, 4)
D = torch.nn.Linear(4, 1)
G_optimizer = torch.optim.Adam(G.parameters(), lr=2e-4)
D_optimizer = torch.optim.Adam(D.parameters(), lr=2e-4)


def train_G():
    x_fake = G(torch.randn(8, 16))
    G_loss = -D(x_fake).mean()
    G.zero_grad()
    G_loss.backward()
    G_optimizer.step()


def train_D(x_real):
    x_fake = G(torch.randn(8, 16))
    D_loss = D(x_fake).mean() - D(x_real).mean()
    D.zero_grad()
    D_loss.backward()  # expect: TL120
    D_optimizer.step()


def main(loader, n_d=5):
    for it, x_real in enumerate(loader):
        train_D(x_real)
        if it % n_d == 0:
            train_G()

"""A trainer's _backward() helper returns the loss tensor itself, and the caller sums those returns (and the raw loss) into D_loss, keeping their graphs alive."""
import torch
import torch.nn.functional as F
from torch import nn


class GanTrainer:
    def __init__(self, G, D, subdivisions=4, world_size=None):
        self.G, self.D = G, D
        self.G_opt = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.0, 0.99))
        self.D_opt = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.0, 0.99))
        self.subdivisions = subdivisions
        self.world_size = world_size

    def _backward(self, loss, mul=1):
        mul /= self.subdivisions
        mul /= self.world_size or 1
        loss = loss * mul
        loss.backward()
        return loss.item() * (self.world_size or 1)

    def d_loss(self, reals):
        fakes = self.G(torch.randn(reals.shape[0], 16))
        return F.softplus(self.D(fakes)).mean() + F.softplus(-self.D(reals)).mean()

    def g_loss(self, batch_size):
        return F.softplus(-self.D(self.G(torch.randn(batch_size, 16)))).mean()

    def train(self, batches):
        for step, reals in enumerate(batches):
            self.G_opt.zero_grad()
            G_loss = 0
            for _ in range(self.subdivisions):
                G_loss += self._backward(self.g_loss(reals.shape[0]))
            self.G_opt.step()

            self.D_opt.zero_grad()
            D_loss = 0
            for _ in range(self.subdivisions):
                loss = self.d_loss(reals)
                D_loss += self._backward(loss)
                D_loss += loss.item()
            self.D_opt.step()
            print(step, float(G_loss), float(D_loss))


if __name__ == "__main__":
    G = nn.Sequential(nn.Linear(16, 64), nn.LeakyReLU(0.2), nn.Linear(64, 32))
    D = nn.Sequential(nn.Linear(32, 64), nn.LeakyReLU(0.2), nn.Linear(64, 1))
    GanTrainer(G, D).train([torch.randn(8, 32) for _ in range(5)])

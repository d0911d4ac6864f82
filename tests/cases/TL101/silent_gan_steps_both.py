# A GAN whose two optimizers both step (the critic's through a helper handed the optimizer, the
# generator's every other iteration), and a loop whose second optimizer is stepped in a method.
import torch
from torch import nn

generator = nn.Linear(8, 2)
critic = nn.Linear(2, 1)
opt_g = torch.optim.Adam(generator.parameters(), lr=1e-4)
opt_d = torch.optim.Adam(critic.parameters(), lr=4e-4)


def apply(optimizer):
    optimizer.step()


for step in range(1000):
    real = torch.randn(16, 2)
    opt_d.zero_grad()
    loss_d = critic(generator(torch.randn(16, 8)).detach()).mean() - critic(real).mean()
    loss_d.backward()
    apply(opt_d)
    if step % 2 == 0:
        opt_g.zero_grad()
        loss_g = -critic(generator(torch.randn(16, 8))).mean()
        loss_g.backward()
        opt_g.step()


class Trainer:
    def __init__(self):
        self.encoder = nn.Linear(4, 4)
        self.head = nn.Linear(4, 1)
        self.opt_encoder = torch.optim.SGD(self.encoder.parameters(), lr=0.1)
        self.opt_head = torch.optim.SGD(self.head.parameters(), lr=0.1)

    def update_head(self):
        self.opt_head.step()

    def fit(self, loader):
        for x in loader:
            self.opt_encoder.zero_grad()
            self.opt_head.zero_grad()
            loss = self.head(self.encoder(x)).mean()
            loss.backward()
            self.opt_encoder.step()
            self.update_head()

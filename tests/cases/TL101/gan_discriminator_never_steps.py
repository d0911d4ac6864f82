# Two optimizers: the critic's is zeroed and its loss backpropagated, but only the generator's
# steps. A loss known to reach the critic makes the finding.
import torch
from torch import nn

generator = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 2))
critic = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 1))
opt_g = torch.optim.Adam(generator.parameters(), lr=1e-4)
opt_d = torch.optim.Adam(critic.parameters(), lr=4e-4)


def sample(n):
    return generator(torch.randn(n, 8))


for step in range(1000):
    real = torch.randn(16, 2)
    opt_d.zero_grad()
    loss_d = critic(sample(16).detach()).mean() - critic(real).mean()
    loss_d.backward()  # expect: TL101

    opt_g.zero_grad()
    loss_g = -critic(sample(16)).mean()
    loss_g.backward()
    opt_g.step()

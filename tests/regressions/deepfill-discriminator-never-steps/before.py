"""A WGAN inpainting loop: the critic is zeroed and backpropagated, but only the generator steps."""
import torch
from torch import nn

generator = nn.Sequential(nn.Conv2d(4, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 3, 3, padding=1))
critic = nn.Sequential(nn.Conv2d(3, 8, 4, stride=2), nn.ReLU(), nn.Flatten(), nn.LazyLinear(1))
opt_g = torch.optim.Adam(generator.parameters(), lr=1e-4)
opt_d = torch.optim.Adam(critic.parameters(), lr=4e-4)


def fill(images, masks):
    return generator(torch.cat([images * (1 - masks), masks], dim=1))


for step in range(1000):
    images = torch.rand(8, 3, 32, 32)
    masks = (torch.rand(8, 1, 32, 32) > 0.7).float()

    opt_d.zero_grad()
    fake = fill(images, masks)
    loss_D = critic(fake.detach()).mean() - critic(images).mean()
    loss_D.backward()

    opt_g.zero_grad()
    loss_g = -critic(fill(images, masks)).mean()
    loss_g.backward()
    opt_g.step()

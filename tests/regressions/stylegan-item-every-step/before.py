"""A GAN loop that reads the discriminator's losses with .item() on every iteration, under a
branch on the configured loss type (a flag that holds for the whole run)."""
import argparse

import torch
import torch.nn.functional as F
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--loss", default="r1", choices=["wgan-gp", "r1"])
args = parser.parse_args()

generator = nn.Sequential(nn.Linear(128, 768), nn.Tanh()).cuda()
discriminator = nn.Sequential(nn.Linear(768, 1)).cuda()
g_optimizer = torch.optim.Adam(generator.parameters(), lr=1e-3, betas=(0.0, 0.99))
d_optimizer = torch.optim.Adam(discriminator.parameters(), lr=1e-3, betas=(0.0, 0.99))
images = [torch.rand(16, 768) for _ in range(100)]

disc_loss_val = 0.0
for i in range(100_000):
    real_image = images[i % len(images)].cuda()
    discriminator.zero_grad()
    real_predict = discriminator(real_image).mean()
    fake_predict = discriminator(generator(torch.randn(16, 128, device="cuda")).detach()).mean()
    if args.loss == "wgan-gp":
        (fake_predict - real_predict).backward()
        disc_loss_val = (real_predict - fake_predict).item()
    elif args.loss == "r1":
        (F.softplus(-real_predict) + F.softplus(fake_predict)).backward()
        disc_loss_val = (real_predict + fake_predict).item()
    d_optimizer.step()

    generator.zero_grad()
    loss = F.softplus(-discriminator(generator(torch.randn(16, 128, device="cuda")))).mean()
    loss.backward()
    g_optimizer.step()
    if i % 100 == 0:
        print(f"D: {disc_loss_val:.3f}")

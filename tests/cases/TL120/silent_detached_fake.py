# The fake detached for the discriminator (and made under no_grad); the generator's loss
# must go through the discriminator.
import torch
from torch import nn

generator = nn.Linear(16, 4)
discriminator = nn.Linear(4, 1)
g_optimizer = torch.optim.Adam(generator.parameters())
d_optimizer = torch.optim.Adam(discriminator.parameters())
loader = [torch.randn(8, 4) for _ in range(10)]

for images in loader:
    fake_images = generator(torch.randn(8, 16))
    d_optimizer.zero_grad()
    d_loss = discriminator(fake_images.detach()).mean() - discriminator(images).mean()
    d_loss.backward()
    d_optimizer.step()

    g_optimizer.zero_grad()
    g_loss = -discriminator(fake_images).mean()
    g_loss.backward()
    g_optimizer.step()

for images in loader:
    with torch.no_grad():
        fake = generator(torch.randn(8, 16))
    d_optimizer.zero_grad()
    (discriminator(fake).mean() - discriminator(images).mean()).backward()
    d_optimizer.step()

# The discriminator's fake loss reads the generator's output attached.
import torch
from torch import nn

generator = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
discriminator = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 1))
g_optimizer = torch.optim.Adam(generator.parameters(), lr=2e-4)
d_optimizer = torch.optim.Adam(discriminator.parameters(), lr=2e-4)
criterion = nn.BCEWithLogitsLoss()
loader = [torch.randn(8, 4) for _ in range(10)]

for epoch in range(5):
    for images in loader:
        d_optimizer.zero_grad()
        real_loss = criterion(discriminator(images), torch.ones(8, 1))
        fake_images = generator(torch.randn(8, 16))
        fake_loss = criterion(discriminator(fake_images), torch.zeros(8, 1))
        d_loss = real_loss + fake_loss
        d_loss.backward()  # expect: TL120
        d_optimizer.step()

        g_optimizer.zero_grad()
        g_loss = criterion(discriminator(fake_images), torch.ones(8, 1))
        g_loss.backward()
        g_optimizer.step()

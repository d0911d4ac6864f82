"""A GAN tutorial on MNIST: the discriminator's fake loss is computed on the generator's
images as they come, so its backward runs through the generator as well."""

import torch
from torch import nn

discriminator = nn.Sequential(
    nn.Linear(784, 256), nn.LeakyReLU(0.2), nn.Linear(256, 1), nn.Sigmoid()
)
generator = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 784), nn.Tanh())
criterion = nn.BCELoss()
d_optimizer = torch.optim.Adam(discriminator.parameters(), lr=0.0005)
g_optimizer = torch.optim.Adam(generator.parameters(), lr=0.0005)


def train(train_loader, epochs=200):
    for epoch in range(epochs):
        for i, (images, _) in enumerate(train_loader):
            images = images.view(images.size(0), -1)
            real_labels = torch.ones(images.size(0), 1)
            fake_labels = torch.zeros(images.size(0), 1)

            discriminator.zero_grad()
            real_loss = criterion(discriminator(images), real_labels)
            fake_images = generator(torch.randn(images.size(0), 128))
            fake_loss = criterion(discriminator(fake_images), fake_labels)
            d_loss = real_loss + fake_loss
            d_loss.backward()
            d_optimizer.step()

            generator.zero_grad()
            fake_images = generator(torch.randn(images.size(0), 128))
            g_loss = criterion(discriminator(fake_images), real_labels)
            g_loss.backward()
            g_optimizer.step()

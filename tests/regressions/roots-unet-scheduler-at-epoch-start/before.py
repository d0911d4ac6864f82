"""The scheduler steps at the top of each epoch, before the batches that step the optimizer."""
import torch
from torch import nn

cnn = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 2, 1))
optimizer = torch.optim.SGD(cnn.parameters(), lr=0.01, momentum=0.99)
scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.95)
criterion = nn.CrossEntropyLoss()
tiles = [(torch.rand(4, 3, 64, 64), torch.randint(0, 2, (4, 64, 64))) for _ in range(6)]

for epoch in range(100):
    cnn.train()
    if scheduler:
        scheduler.step()
    loss_sum = 0.0
    for images, labels in tiles:
        optimizer.zero_grad()
        loss = criterion(cnn(images), labels)
        loss.backward()
        optimizer.step()
        loss_sum += loss.detach()
    print(epoch, (loss_sum / len(tiles)).item())

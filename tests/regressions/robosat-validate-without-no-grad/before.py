"""A segmentation trainer: every epoch calls validate(), which runs the net in eval mode with
autograd on."""
import torch
from torch import nn


def train(loader, net, optimizer, criterion):
    net.train()
    total = 0.0
    for images, masks in loader:
        optimizer.zero_grad()
        loss = criterion(net(images), masks)
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / len(loader)


def validate(loader, net, criterion):
    net.eval()
    total = 0.0
    for images, masks in loader:
        outputs = net(images)
        total += criterion(outputs, masks).item()
    return total / len(loader)


def main():
    net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.Conv2d(8, 2, 1))
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    criterion = nn.CrossEntropyLoss()
    train_loader = [(torch.rand(4, 3, 32, 32), torch.randint(0, 2, (4, 32, 32))) for _ in range(8)]
    val_loader = train_loader[:2]
    for epoch in range(10):
        train_loss = train(train_loader, net, optimizer, criterion)
        val_loss = validate(val_loader, net, criterion)
        print(epoch, train_loss, val_loss)


if __name__ == "__main__":
    main()

"""A hyperspectral pixel classifier trained per epoch, with a validation pass after each epoch
that scores the held-out patches."""
import torch
from torch import nn


def val(net, data_loader, device="cpu"):
    net.eval()
    correct, total = 0.0, 0.0
    for data, target in data_loader:
        with torch.no_grad():
            data, target = data.to(device), target.to(device)
            output = net(data)
            _, output = torch.max(output, dim=1)
            correct += (output == target).sum().item()
            total += target.numel()
    return correct / total


def train(net, optimizer, criterion, data_loader, epochs, val_loader=None, device="cpu"):
    net.to(device)
    for e in range(epochs):
        net.train()
        for data, target in data_loader:
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            loss = criterion(net(data), target)
            loss.backward()
            optimizer.step()
        if val_loader is not None:
            print(e, val(net, val_loader, device=device))


if __name__ == "__main__":
    net = nn.Sequential(nn.Linear(103, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Dropout(0.5), nn.Linear(64, 9))
    batches = [(torch.randn(16, 103), torch.randint(0, 9, (16,))) for _ in range(4)]
    train(net, torch.optim.Adam(net.parameters()), nn.CrossEntropyLoss(), batches, 2, val_loader=batches)

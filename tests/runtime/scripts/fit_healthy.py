"""Learns and generalises: random_split into disjoint Subsets, evaluate() run before training
(a baseline, not an epoch), train_one_epoch()/evaluate() functions, nn.CrossEntropyLoss. The
script stops after 4 epochs on its own."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split

torch.manual_seed(0)
centres = torch.randn(3, 10) * 2
labels = torch.randint(0, 3, (768,))
data = TensorDataset(centres[labels] + torch.randn(768, 10), labels)
train_set, val_set = random_split(data, [640, 128])
criterion = nn.CrossEntropyLoss()


def train_one_epoch(model, loader, optimizer):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)  # line: train_loss
        loss.backward()
        optimizer.step()


def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        return sum(criterion(model(x), y).item() for x, y in loader) / len(loader)  # line: val


def main():
    train_loader = DataLoader(train_set, batch_size=32, shuffle=True)  # line: train_loader
    val_loader = DataLoader(val_set, batch_size=64)  # line: val_loader
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02)
    print("before training", evaluate(model, val_loader))
    for epoch in range(4):
        train_one_epoch(model, train_loader, optimizer)
        print(epoch, evaluate(model, val_loader))


if __name__ == "__main__":
    main()

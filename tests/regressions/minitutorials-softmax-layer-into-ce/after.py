"""The classifier's last layer is a Softmax module while the loss a helper is handed is CrossEntropyLoss."""
import torch
from torch import nn, optim


class SmallConvNet(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.features = nn.Sequential()
        self.features.add_module("conv", nn.Conv2d(1, 8, kernel_size=5))
        self.features.add_module("pool", nn.MaxPool2d(kernel_size=2))
        self.features.add_module("relu", nn.ReLU())
        self.head = nn.Sequential()
        self.head.add_module("fc1", nn.Linear(8 * 12 * 12, 32))
        self.head.add_module("relu", nn.ReLU())
        self.head.add_module("fc2", nn.Linear(32, classes))

    def forward(self, x):
        x = self.features.forward(x)
        x = x.view(x.size(0), -1)
        return self.head.forward(x)


def train_batch(model, criterion, optimizer, x, y):
    optimizer.zero_grad()
    scores = model.forward(x)
    cost = criterion.forward(scores, y)
    cost.backward()
    optimizer.step()
    return cost.item()


def main():
    images = torch.randn(600, 1, 28, 28)
    labels = torch.randint(0, 10, (600,))
    model = SmallConvNet(classes=10)
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    batch = 100
    for epoch in range(5):
        total = 0.0
        for k in range(len(images) // batch):
            lo, hi = k * batch, (k + 1) * batch
            total += train_batch(model, criterion, optimizer, images[lo:hi], labels[lo:hi])
        print(epoch, total)


if __name__ == "__main__":
    main()

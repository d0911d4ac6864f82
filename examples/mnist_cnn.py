"""A small LeNet-style CNN on synthetic MNIST-sized images: the clean reference script.

Good habits on show: `model.train()` at the start of every epoch, zero_grad / backward / step in
that order, the loss read back to the host only every `LOG_EVERY` steps, evaluation under
`torch.no_grad()`, a shuffled training loader and a checkpoint at the end.
"""

import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

EPOCHS = 2
BATCH_SIZE = 64
LOG_EVERY = 10


def synthetic_digits(n, seed):
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, 10, (n,), generator=g)
    images = 0.5 * torch.randn(n, 1, 28, 28, generator=g)
    images[torch.arange(n), 0, labels * 2 + 4, 4:24] += 1.5  # one bright row per class
    return TensorDataset(images, labels)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc1 = nn.Linear(16 * 7 * 7, 64)
        self.fc2 = nn.Linear(64, 10)
        self.dropout = nn.Dropout(0.25)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = self.dropout(torch.flatten(x, 1))
        return self.fc2(F.relu(self.fc1(x)))


def main():
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader = DataLoader(synthetic_digits(1024, 1), batch_size=BATCH_SIZE, shuffle=True)
    test_loader = DataLoader(synthetic_digits(256, 2), batch_size=256)

    model = Net().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)

    for epoch in range(1, EPOCHS + 1):
        model.train()
        for batch_idx, (data, target) in enumerate(train_loader):
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            output = model(data)
            loss = F.cross_entropy(output, target)
            loss.backward()
            optimizer.step()
            if batch_idx % LOG_EVERY == 0:
                print(f"epoch {epoch} [{batch_idx * len(data)}/{len(train_loader.dataset)}] "
                      f"loss {loss.item():.4f}")
        scheduler.step()

        model.eval()
        test_loss, correct = 0.0, 0
        with torch.no_grad():
            for data, target in test_loader:
                data, target = data.to(device), target.to(device)
                output = model(data)
                test_loss += F.cross_entropy(output, target, reduction="sum").item()
                correct += (output.argmax(dim=1) == target).sum().item()
        test_loss /= len(test_loader.dataset)
        print(f"epoch {epoch}: test loss {test_loss:.4f}, "
              f"accuracy {correct / len(test_loader.dataset):.3f}")

    path = os.path.join(tempfile.gettempdir(), "mnist_cnn.pt")
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, path)
    print(f"final loss {loss.item():.4f}")


if __name__ == "__main__":
    main()

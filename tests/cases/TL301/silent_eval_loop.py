import torch

model = torch.nn.Linear(10, 2)


@torch.no_grad()
def evaluate(loader):
    correct = 0
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum().item()
    return correct

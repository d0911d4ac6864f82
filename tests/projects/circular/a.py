import torch

from b import inner_step


def apply_update(optimizer):
    optimizer.step()


def train(model, loader, criterion):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()  # project: TL102
        inner_step(optimizer)

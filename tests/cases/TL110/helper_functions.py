import torch
import torch.nn.functional as F


@torch.no_grad()
def train_one_epoch(model, loader, optimizer):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()  # expect: TL110
        optimizer.step()


def training_step(model, batch, optimizer):
    x, y = batch
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()  # expect: TL110
    optimizer.step()
    return loss.item()


def fit(model, loader, optimizer, epochs):
    for epoch in range(epochs):
        train_one_epoch(model, loader, optimizer)


def finetune(model, loader, optimizer):
    for batch in loader:
        with torch.no_grad():  # meant to freeze the backbone, wraps the whole step instead
            training_step(model, batch, optimizer)

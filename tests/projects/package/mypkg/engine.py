import torch


def evaluate(model, loader):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for x, y in loader:
            total += model(x).sum()
    return total


def evaluate_and_restore(model, loader):
    model.eval()
    with torch.no_grad():
        for x, y in loader:
            model(x)
    model.train()


def backward_only(model, batch, criterion):
    x, y = batch
    loss = criterion(model(x), y)
    loss.backward()
    return loss


def full_step(model, batch, criterion, optimizer):
    optimizer.zero_grad()
    loss = backward_only(model, batch, criterion)
    optimizer.step()
    return loss

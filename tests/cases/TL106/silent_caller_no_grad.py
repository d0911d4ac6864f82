import torch
import torch.nn.functional as F


def evaluate(model, loader):
    model.eval()
    total = 0.0
    for x, y in loader:
        total += F.mse_loss(model(x), y).item()
    return total / len(loader)


def train(model, train_loader, val_loader, optimizer, epochs):
    for epoch in range(epochs):
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            F.mse_loss(model(x), y).backward()
            optimizer.step()
        with torch.no_grad():
            val = evaluate(model, val_loader)
        print(epoch, val)


def test(model, test_loader):
    with torch.inference_mode():
        return evaluate(model, test_loader)

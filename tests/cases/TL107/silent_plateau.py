import torch
import torch.nn.functional as F
from torch.optim.lr_scheduler import ReduceLROnPlateau


def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        return sum(F.mse_loss(model(x), y).item() for x, y in loader)


def train(model, train_loader, val_loader, epochs):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = ReduceLROnPlateau(optimizer, mode="min", factor=0.5, patience=2)
    for epoch in range(epochs):
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            F.mse_loss(model(x), y).backward()
            optimizer.step()
        val_loss = evaluate(model, val_loader)
        scheduler.step(val_loss)


def train_resumed(model, train_loader, val_loader, optimizer, lr_scheduler):
    val_loss = evaluate(model, val_loader)
    for epoch in range(10):
        lr_scheduler.step(val_loss)
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            F.mse_loss(model(x), y).backward()
            optimizer.step()
        val_loss = evaluate(model, val_loader)

import torch
import torch.nn.functional as F


def train_one_epoch(model, loader, optimizer, lr_scheduler=None):
    model.train()
    for inputs, targets in loader:
        if lr_scheduler is not None:
            lr_scheduler.step()  # expect: TL107
        optimizer.zero_grad()
        loss = F.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()


def fit(model, loader, optimizer, epochs):
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    for epoch in range(epochs):
        scheduler.step()  # expect: TL107
        train_one_epoch(model, loader, optimizer)


def main(model, loader):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    warmup = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.01, total_iters=500)
    for epoch in range(5):
        train_one_epoch(model, loader, optimizer, warmup)

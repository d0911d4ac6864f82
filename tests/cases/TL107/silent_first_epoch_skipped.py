import torch


def fit(model, loader, optimizer, scheduler, epochs):
    for epoch in range(epochs):
        if epoch > 0:
            scheduler.step()
        for x, y in loader:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()

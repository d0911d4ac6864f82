import torch


def train(model, loader, optimizer, device):
    for x, y in loader:
        logits = model(x.to(device))
        target = torch.zeros_like(logits).to(device)
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(logits, target).backward()
        optimizer.step()

import torch


def train(model, loader, optimizer, device):
    for x in loader:
        positions = torch.arange(x.shape[1]).unsqueeze(0).to(device)  # expect: TL305
        optimizer.zero_grad()
        model(x, positions).sum().backward()
        optimizer.step()

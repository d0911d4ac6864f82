import torch


def train(model, loader, optimizer):
    for x in loader:
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()
        if torch.cuda.is_available():
            torch.cuda.synchronize()  # expect: TL302

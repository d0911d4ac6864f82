import torch
import torch.nn.functional as F


def train(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", enabled=False):
            loss = F.cross_entropy(model(x), y)
            loss.backward()
        optimizer.step()


@torch.no_grad()
def evaluate(model, loader):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        return [model(x).argmax(1) for x, _ in loader]

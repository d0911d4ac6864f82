import torch
import torch.nn.functional as F


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    total = 0.0
    outputs = []
    for x, y in loader:
        out = model(x)
        total += F.cross_entropy(out, y, reduction="sum")
        outputs.append(out)
    return total, torch.cat(outputs)


def validate(model, loader):
    model.eval()
    val_loss = 0.0
    with torch.no_grad():
        for x, y in loader:
            val_loss += F.cross_entropy(model(x), y)
    return val_loss / len(loader)


def train(model, loader, optimizer):
    running = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            running += loss
    return running

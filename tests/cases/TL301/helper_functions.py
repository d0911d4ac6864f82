import torch


def log_metrics(loss, outputs, targets):
    acc = (outputs.argmax(1) == targets).float().mean()
    return float(loss), acc.item()  # expect: TL301, TL301


def train(model, loader, optimizer, device):
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        outputs = model(x)
        loss = torch.nn.functional.cross_entropy(outputs, y)
        loss.backward()
        optimizer.step()
        log_metrics(loss, outputs, y)

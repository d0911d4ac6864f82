import torch
import torch.nn.functional as F


@torch.no_grad()
def compute_loss(model, x, y):
    return F.mse_loss(model(x), y)


def train(model, loader, optimizer):
    for x, y in loader:
        loss = compute_loss(model, x, y)
        loss.backward()  # expect: TL110
        with torch.no_grad():
            out = model(x)
        loss2 = F.mse_loss(out, y)
        loss2.backward()  # expect: TL110
        optimizer.step()


def fit(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()  # expect: TL110
        optimizer.step()


def main(model, loader, optimizer):
    with torch.inference_mode():
        fit(model, loader, optimizer)

import torch
import torch.nn.functional as F


@torch.no_grad()
def evaluate_robustness(model, loader, eps=0.03):
    model.eval()
    correct = 0
    for x, y in loader:
        with torch.enable_grad():
            x_adv = x.clone().requires_grad_(True)
            loss = F.cross_entropy(model(x_adv), y)
            loss.backward()
        x_adv = (x + eps * x_adv.grad.sign()).clamp(0, 1)
        correct += (model(x_adv).argmax(1) == y).sum().item()
    return correct


def run_phase(model, loader, optimizer, is_train):
    for x, y in loader:
        with torch.set_grad_enabled(is_train):
            loss = F.cross_entropy(model(x), y)
        if is_train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

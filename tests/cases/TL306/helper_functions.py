import torch
import torch.nn.functional as F


def loss_terms(logits, targets):
    ce = F.cross_entropy(logits, targets)
    accuracy = (logits.argmax(-1) == targets).float().mean()
    return ce, {"ce": ce.item(), "accuracy": accuracy.detach()}  # expect: TL306


def step(model, x, y):
    loss, stats = loss_terms(model(x), y)
    return loss, stats


compiled_step = torch.compile(step, mode="max-autotune")


def train(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        loss, stats = compiled_step(model, x, y)
        loss.backward()
        optimizer.step()

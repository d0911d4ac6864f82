import torch
import torch.nn.functional as F


def fgsm_examples(model, loader, eps=8 / 255):
    """Adversarial examples need input gradients, with the model frozen in eval mode."""
    model.eval()
    adversarial = []
    for x, y in loader:
        x = x.clone().requires_grad_(True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        adversarial.append((x + eps * x.grad.sign()).clamp(0, 1).detach())
    return adversarial


def finetune_head(model, head, loader, optimizer):
    model.eval()
    head.train()
    for x, y in loader:
        with torch.no_grad():
            features = model(x)
        loss = F.cross_entropy(head(features), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

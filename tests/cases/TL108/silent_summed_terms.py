import torch
import torch.nn.functional as F


def train_multi_head(model, heads, loader, optimizer):
    for x, y in loader:
        features = model(x)
        loss = 0.0
        for head in heads:
            loss += F.cross_entropy(head(features), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def train_deep_supervision(model, loader, optimizer, weights):
    for x, y in loader:
        total_loss = torch.zeros((), device=x.device)
        for w, out in zip(weights, model(x)):
            total_loss = total_loss + w * F.mse_loss(out, y)
        optimizer.zero_grad()
        total_loss.backward()
        optimizer.step()


def train_accumulated(model, loader, optimizer, accum_steps=4):
    accum_loss = 0.0
    for step, (x, y) in enumerate(loader):
        accum_loss += F.mse_loss(model(x), y) / accum_steps
        if (step + 1) % accum_steps == 0:
            accum_loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            accum_loss = 0.0

# Near-miss: the same flag, with the gradients cleared right after the step it guards.
import torch


def train(model, loader, optimizer, accum):
    for step, (x, y) in enumerate(loader):
        should_step = (step + 1) % accum == 0
        loss = model(x).sum() / accum
        loss.backward()
        if should_step:
            optimizer.step()
            optimizer.zero_grad()

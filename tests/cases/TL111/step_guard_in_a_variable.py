# The accumulation guard is computed into a flag before it is tested.
import torch


def train(model, loader, optimizer, accum):
    for step, (x, y) in enumerate(loader):
        should_step = (step + 1) % accum == 0
        optimizer.zero_grad()  # expect: TL111
        loss = model(x).sum() / accum
        loss.backward()
        if should_step:
            optimizer.step()

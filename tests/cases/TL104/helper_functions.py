import torch


def apply_update(optimizer, scheduler):
    optimizer.step()  # expect: TL104
    scheduler.step()


def train(model, loader, optimizer, scheduler):
    for batch in loader:
        apply_update(optimizer, scheduler)
        optimizer.zero_grad()
        loss = model(batch).mean()
        loss.backward()

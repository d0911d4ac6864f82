import torch


def train(model, loader, optimizer, scaler, use_amp):
    for x in loader:
        optimizer.zero_grad()
        loss = model(x).mean()
        if use_amp:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            optimizer.step()

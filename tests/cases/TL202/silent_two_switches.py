import torch


def train(model, loader, optimizer, scaler, use_amp):
    for x in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", enabled=use_amp):
            loss = model(x).sum()
        if use_amp:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        if use_amp:
            scaler.step(optimizer)
            scaler.update()
        else:
            optimizer.step()

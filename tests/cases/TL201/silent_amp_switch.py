import torch


def train(model, loader, optimizer, use_amp: bool):
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", enabled=use_amp):
            loss = model(x).mean()
        if use_amp:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            optimizer.step()


def train_fp32(model, loader, optimizer):
    for x in loader:
        optimizer.zero_grad()
        model(x).mean().backward()
        optimizer.step()

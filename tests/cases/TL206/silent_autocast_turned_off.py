import torch


def train(model, loader, optimizer, scaler):
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).float().mean()
            with torch.autocast("cuda", enabled=False):
                scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()

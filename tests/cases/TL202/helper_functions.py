import torch


def amp_step(loss, optimizer, scaler):
    scaler.scale(loss).backward()
    scaler.step(optimizer)  # expect: TL202


def train(model, loader, optimizer):
    scaler = torch.amp.GradScaler("cuda")
    for x in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda"):
            loss = model(x).mean()
        amp_step(loss, optimizer, scaler)

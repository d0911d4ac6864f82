import torch

scaler = torch.amp.GradScaler("cuda")


def train_fp16(model, loader, optimizer):
    for x in loader:
        with torch.autocast("cuda"):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()


def train_bf16(model, loader, optimizer):
    for x in loader:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(x).sum()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

import torch


def train_epoch(model, loader, optimizer, criterion):
    scaler = torch.cuda.amp.GradScaler()
    for inputs, targets in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(inputs), targets)
        loss.backward()  # expect: TL201
        optimizer.step()

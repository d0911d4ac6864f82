import torch
from torch.nn.utils import clip_grad_norm_, clip_grad_value_


def clip_gradients(model, max_norm):
    if max_norm > 0:
        clip_grad_norm_(model.parameters(), max_norm)  # expect: TL203


def train_one_epoch(model, loader, optimizer, scaler, max_norm=1.0):
    model.train()
    for images, targets in loader:
        with torch.autocast(device_type="cuda"):
            loss = torch.nn.functional.cross_entropy(model(images), targets)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        clip_gradients(model, max_norm)
        scaler.step(optimizer)
        scaler.update()


def train_rnn(model, loader, optimizer, scaler):
    for tokens, targets in loader:
        with torch.autocast(device_type="cuda"):
            loss = model(tokens, targets)
        scaled = scaler.scale(loss)
        scaled.backward()
        clip_grad_value_(model.parameters(), clip_value=0.5)  # expect: TL203
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()


def main(model, loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    for epoch in range(90):
        train_one_epoch(model, loader, optimizer, scaler)

import torch
import torch.nn.functional as F


def training_step(model, batch, optimizer, scaler):
    images, targets = batch
    loss = F.cross_entropy(model(images), targets)
    optimizer.zero_grad()
    scaler.scale(loss).backward()  # expect: TL206
    scaler.step(optimizer)
    scaler.update()
    return loss.detach()


def train_one_epoch(model, loader, optimizer, scaler):
    model.train()
    for batch in loader:
        with torch.autocast(device_type="cuda", dtype=torch.float16):
            training_step(model, batch, optimizer, scaler)


@torch.autocast("cuda", dtype=torch.bfloat16)
def lm_step(model, tokens, optimizer):
    loss = model(tokens[:, :-1], labels=tokens[:, 1:]).loss
    loss.backward()  # expect: TL206
    optimizer.step()
    optimizer.zero_grad()


def pretrain(model, loader, optimizer):
    for tokens in loader:
        lm_step(model, tokens, optimizer)

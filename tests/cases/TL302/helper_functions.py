import gc

import torch
import torch.nn.functional as F


def free_memory():
    gc.collect()
    torch.cuda.empty_cache()  # expect: TL302


def train_one_epoch(model, loader, optimizer, device):
    model.train()
    for images, masks in loader:
        images, masks = images.to(device), masks.to(device)
        optimizer.zero_grad()
        loss = F.binary_cross_entropy_with_logits(model(images), masks)
        loss.backward()
        optimizer.step()
        del images, masks, loss
        free_memory()


def train_steps(model, loader, optimizer, max_steps):
    step = 0
    while step < max_steps:
        for x, y in loader:
            loss = F.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            torch.cuda.synchronize()  # expect: TL302

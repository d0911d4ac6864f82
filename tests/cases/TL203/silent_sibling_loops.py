# Several optimizers under one scaler: every optimizer is unscaled in one loop, then every
# model is clipped in the next; the two loops run as one sequence per element.
import torch


def train(models, optimizers, loader, scaler):
    for batch in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = sum(m(batch).sum() for m in models)
        scaler.scale(loss).backward()
        for opt in optimizers:
            scaler.unscale_(opt)
        for model in models:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        for opt in optimizers:
            scaler.step(opt)
        scaler.update()
        for opt in optimizers:
            opt.zero_grad()

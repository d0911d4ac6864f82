import torch
import torch.nn.functional as F


def train(model, loader, optimizer, empty_cache_every=500):
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
        if step % empty_cache_every == 0:
            torch.cuda.empty_cache()
        if (step + 1) % 100 == 0:
            torch.cuda.synchronize()
            print(f"step {step} done, {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB")


def fit(model, loader, optimizer, epochs):
    for epoch in range(epochs):
        train(model, loader, optimizer)
        torch.cuda.synchronize()
        torch.cuda.empty_cache()

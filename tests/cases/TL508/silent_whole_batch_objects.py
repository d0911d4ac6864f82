# A whole batch may be an object whose `.to()` converts in place (a PyTorch Geometric `Data`,
# a Hugging Face `BatchEncoding`): only items unpacked from the batch tuple are known tensors.
import torch


def train(model, loader, optimizer, device):
    for batch in loader:
        batch.to(device)
        optimizer.zero_grad()
        model(batch).sum().backward()
        optimizer.step()
    for step, batch in enumerate(loader):
        batch.to(device)

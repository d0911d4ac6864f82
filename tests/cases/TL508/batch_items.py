# Items of the loader's batch tuple converted by statements: the loop trains on the CPU copies.
import torch
import torch.nn.functional as F


def train(model, loader, optimizer, device):
    model.to(device)
    for images, labels in loader:
        images.to(device)  # expect: TL508
        labels.to(device)  # expect: TL508
        optimizer.zero_grad()
        F.cross_entropy(model(images), labels).backward()
        optimizer.step()


def train_enumerated(model, loader, optimizer):
    for step, (x, y) in enumerate(loader):
        x.cuda()  # expect: TL508
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        optimizer.step()

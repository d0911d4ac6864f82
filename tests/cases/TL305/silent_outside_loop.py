import numpy as np
import torch
import torch.nn.functional as F


def train(model, loader, optimizer, device, num_classes):
    class_weights = torch.ones(num_classes).to(device)
    fixed_noise = torch.randn(64, 100).to(device)
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        loss = F.cross_entropy(model(x), y, weight=class_weights)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return fixed_noise


def train_from_numpy(model, batches, optimizer, device):
    for images, labels in batches:
        x = torch.from_numpy(np.stack(images)).to(device)
        y = torch.from_numpy(labels).to(device)
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

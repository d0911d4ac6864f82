import argparse

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

args = argparse.Namespace(pin_mem=True)


def fit(model, loader, optimizer, device):
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        optimizer.step()


def main(model, dataset, optimizer):
    device = torch.device("cuda")
    plain = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=4)
    fit(model, plain, optimizer, device)
    unpinned = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=4, pin_memory=False)
    fit(model, unpinned, optimizer, device)
    configured = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=4, pin_memory=args.pin_mem)
    fit(model, configured, optimizer, device)

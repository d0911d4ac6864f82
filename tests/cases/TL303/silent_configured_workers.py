import argparse
import os

import torch.nn.functional as F
from torch.utils.data import DataLoader

parser = argparse.ArgumentParser()
parser.add_argument("--workers", type=int, default=8)
args = parser.parse_args()
loader_kwargs = {"num_workers": 4, "pin_memory": True, "persistent_workers": True}


def fit(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        optimizer.step()


def main(model, train_ds, optimizer, cfg):
    args_loader = DataLoader(train_ds, batch_size=64, shuffle=True, num_workers=args.workers)
    fit(model, args_loader, optimizer)
    cfg_loader = DataLoader(train_ds, batch_size=64, shuffle=True, num_workers=cfg.num_workers)
    fit(model, cfg_loader, optimizer)
    cpu_loader = DataLoader(train_ds, batch_size=64, shuffle=True, num_workers=os.cpu_count() // 2)
    fit(model, cpu_loader, optimizer)
    kw_loader = DataLoader(train_ds, batch_size=64, shuffle=True, **loader_kwargs)
    fit(model, kw_loader, optimizer)


def train_simple(model, train_ds, optimizer, num_workers):
    loader = DataLoader(train_ds, 64, True, None, None, num_workers)
    for x, y in loader:
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        optimizer.step()

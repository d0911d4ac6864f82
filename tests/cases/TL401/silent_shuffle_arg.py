import argparse

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

parser = argparse.ArgumentParser()
parser.add_argument("--no-shuffle", dest="shuffle", action="store_false")
parser.add_argument("--distributed", action="store_true")
args = parser.parse_args()


def fit(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()


def main(model, train_ds, optimizer):
    loader = DataLoader(train_ds, batch_size=64, shuffle=args.shuffle, num_workers=4)
    fit(model, loader, optimizer)
    train_sampler = DistributedSampler(train_ds) if args.distributed else None
    imagenet_loader = DataLoader(
        train_ds, batch_size=256, shuffle=(train_sampler is None), sampler=train_sampler, num_workers=8
    )
    fit(model, imagenet_loader, optimizer)

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, RandomSampler
from torch.utils.data.distributed import DistributedSampler


def train_one_epoch(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)


def main(model, train_ds, val_ds, optimizer):
    shuffled = DataLoader(train_ds, batch_size=64, shuffle=True, num_workers=4)
    sampled = DataLoader(train_ds, batch_size=64, sampler=RandomSampler(train_ds), num_workers=4)
    val_loader = DataLoader(val_ds, batch_size=64, sampler=DistributedSampler(val_ds, shuffle=False))
    for epoch in range(10):
        model.train()
        train_one_epoch(model, shuffled, optimizer)
        train_one_epoch(model, sampled, optimizer)
        print(epoch, evaluate(model, val_loader))

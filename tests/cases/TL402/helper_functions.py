import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, DistributedSampler


def train_one_epoch(model, loader, optimizer, epoch):
    model.train()
    for images, labels in loader:
        images, labels = images.cuda(non_blocking=True), labels.cuda(non_blocking=True)
        optimizer.zero_grad()
        F.cross_entropy(model(images), labels).backward()
        optimizer.step()


def main(model, train_ds, rank, world_size, epochs):
    train_sampler = DistributedSampler(train_ds, num_replicas=world_size, rank=rank)
    train_loader = DataLoader(train_ds, batch_size=32, sampler=train_sampler, num_workers=8, pin_memory=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(epochs):  # expect: TL402
        train_one_epoch(model, train_loader, optimizer, epoch)
        if rank == 0:
            torch.save(model.state_dict(), f"ckpt_{epoch}.pt")


def finetune(model, train_ds, optimizer, epochs):
    loader = DataLoader(train_ds, batch_size=32, sampler=DistributedSampler(train_ds), num_workers=8)
    epoch = 0
    while epoch < epochs:  # expect: TL402
        train_one_epoch(model, loader, optimizer, epoch)
        epoch += 1

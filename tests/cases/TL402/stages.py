import torch
from torch.utils.data import DataLoader, DistributedSampler


def train(model, dataset, optimizer, stages, epochs_per_stage):
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler, num_workers=4)
    for stage in stages:
        for epoch in range(epochs_per_stage):  # expect: TL402
            for x, y in loader:
                optimizer.zero_grad()
                torch.nn.functional.mse_loss(model(x), y).backward()
                optimizer.step()


def evaluate_each_epoch(model, dataset, optimizer, epochs):
    fixed = DistributedSampler(dataset, shuffle=False)
    loader = DataLoader(dataset, batch_size=32, sampler=fixed, num_workers=4)
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()

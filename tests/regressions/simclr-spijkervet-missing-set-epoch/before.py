"""A contrastive trainer builds a DistributedSampler when running on several GPUs, but its epoch
loop never reseeds it."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def train(loader, model, criterion, optimizer):
    total = 0.0
    for x_i, x_j in loader:
        optimizer.zero_grad()
        loss = criterion(model(x_i), model(x_j))
        loss.backward()
        optimizer.step()
        total += loss.detach()
    return total


def main(gpu, world_size, epochs=100):
    dataset = TensorDataset(torch.rand(5000, 3, 32, 32), torch.rand(5000, 3, 32, 32))
    train_sampler = None
    if world_size > 1:
        dist.init_process_group("nccl", rank=gpu, world_size=world_size)
        train_sampler = DistributedSampler(dataset, num_replicas=world_size, rank=gpu, shuffle=True)
    train_loader = DataLoader(dataset, batch_size=128, shuffle=(train_sampler is None), sampler=train_sampler)
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3072, 128))
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    criterion = torch.nn.CosineEmbeddingLoss()
    for epoch in range(epochs):
        loss_epoch = train(train_loader, model, lambda a, b: criterion(a, b, torch.ones(len(a))), optimizer)
        print(epoch, loss_epoch)

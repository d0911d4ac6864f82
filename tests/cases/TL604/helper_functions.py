import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def train(rank, world_size, model, loader, epochs):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    model = DistributedDataParallel(model.to(rank), device_ids=[rank])
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x.to(rank)), y.to(rank)).backward()
            optimizer.step()
        state = {"model": model.module.state_dict(), "epoch": epoch}
        torch.save(state, f"checkpoints/epoch_{epoch}.pt")  # expect: TL604
    dist.destroy_process_group()

# PyTorch Geometric's loaders are DataLoaders: a DistributedSampler they are given needs
# `set_epoch` just the same.
from torch.utils.data.distributed import DistributedSampler
from torch_geometric.loader import NeighborLoader


def run(rank, world, model, data, train_idx, optimizer):
    sampler = DistributedSampler(train_idx, num_replicas=world, rank=rank)
    loader = NeighborLoader(
        data, num_neighbors=[10, 5], batch_size=32, sampler=sampler, num_workers=4
    )
    for epoch in range(10):  # expect: TL402
        for batch in loader:
            loss = model(batch.x, batch.edge_index).sum()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()

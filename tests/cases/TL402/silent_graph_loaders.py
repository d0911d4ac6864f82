# Near-misses: the graph loader's sampler is re-seeded every epoch, or the loader shuffles on
# its own without a distributed sampler.
from torch.utils.data.distributed import DistributedSampler
from torch_geometric.loader import DataLoader, NeighborLoader


def run(rank, world, model, data, train_idx, optimizer):
    sampler = DistributedSampler(train_idx, num_replicas=world, rank=rank)
    loader = NeighborLoader(
        data, num_neighbors=[10, 5], batch_size=32, sampler=sampler, num_workers=4
    )
    for epoch in range(10):
        sampler.set_epoch(epoch)
        for batch in loader:
            loss = model(batch.x, batch.edge_index).sum()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()


def run_single(model, dataset, optimizer):
    loader = DataLoader(dataset, batch_size=32, shuffle=True, num_workers=4)
    for epoch in range(10):
        for batch in loader:
            loss = model(batch).sum()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()

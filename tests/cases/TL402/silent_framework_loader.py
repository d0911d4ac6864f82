# A loader prepared by Accelerate or set up by Fabric is re-seeded by the framework: the
# wrapper calls its sampler's `set_epoch` each time it is iterated (Accelerate's
# DataLoaderShard, Fabric's _FabricDataLoader).
import lightning as L
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, DistributedSampler


def train_accelerate(model, dataset, optimizer, epochs):
    accelerator = Accelerator()
    loader = DataLoader(dataset, batch_size=32, sampler=DistributedSampler(dataset))
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for epoch in range(epochs):
        for batch in loader:
            optimizer.zero_grad()
            accelerator.backward(model(batch).mean())
            optimizer.step()


def train_fabric(model, dataset, optimizer, epochs):
    fabric = L.Fabric()
    model, optimizer = fabric.setup(model, optimizer)
    sampler = DistributedSampler(dataset)
    loader = fabric.setup_dataloaders(DataLoader(dataset, batch_size=32, sampler=sampler))
    for epoch in range(epochs):
        for batch in loader:
            optimizer.zero_grad()
            fabric.backward(torch.nn.functional.mse_loss(model(batch), batch))
            optimizer.step()

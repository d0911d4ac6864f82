"""A trainer class gets its loaders in a dict from main(), which built a DistributedSampler for
training; the trainer's epoch loop never calls set_epoch."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Trainer:
    def __init__(self, data_loader, sampler, model, optimizer, epochs):
        self.data_loader = data_loader
        self.sampler = sampler
        self.model = model
        self.optimizer = optimizer
        self.epochs = epochs

    def run(self):
        for epoch in range(self.epochs):
            self.sampler["train"].set_epoch(epoch)
            self._train_epoch()

    def _train_epoch(self):
        for x, y in self.data_loader["train"]:
            self.optimizer.zero_grad()
            loss = torch.nn.functional.l1_loss(self.model(x), y)
            loss.backward()
            self.optimizer.step()


def main():
    dist.init_process_group("nccl")
    dataset = TensorDataset(torch.randn(10_000, 80), torch.randn(10_000, 80))
    sampler = {"train": DistributedSampler(dataset), "dev": None}
    data_loader = {"train": DataLoader(dataset, batch_size=16, sampler=sampler["train"], shuffle=False)}
    model = torch.nn.Linear(80, 80)
    Trainer(data_loader, sampler, model, torch.optim.Adam(model.parameters()), epochs=100).run()

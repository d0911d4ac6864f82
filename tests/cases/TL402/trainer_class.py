import torch
from torch import nn
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


class DDPTrainer:
    def __init__(self, model: nn.Module, dataset, rank: int, batch_size=64):
        self.model = nn.parallel.DistributedDataParallel(model.to(rank), device_ids=[rank])
        self.rank = rank
        self.sampler = DistributedSampler(dataset)
        self.loader = DataLoader(dataset, batch_size=batch_size, sampler=self.sampler, num_workers=4)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.05, momentum=0.9)

    def run_batch(self, source, targets):
        self.optimizer.zero_grad()
        loss = nn.functional.cross_entropy(self.model(source), targets)
        loss.backward()
        self.optimizer.step()

    def run_epoch(self, epoch):
        for source, targets in self.loader:
            self.run_batch(source.to(self.rank), targets.to(self.rank))

    def train(self, max_epochs):
        for epoch in range(max_epochs):  # expect: TL402
            self.run_epoch(epoch)
            if self.rank == 0 and epoch % 10 == 0:
                torch.save(self.model.module.state_dict(), "checkpoint.pt")

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def train_one_epoch(model, loader, optimizer, epoch):
    loader.sampler.set_epoch(epoch)
    for x, y in loader:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()


def main(model, dataset, optimizer, args):
    train_sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=64, sampler=train_sampler, num_workers=4)
    for epoch in range(args.start_epoch, args.epochs):
        if args.distributed:
            train_sampler.set_epoch(epoch)
        for x, y in loader:
            optimizer.zero_grad()
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
    for epoch in range(args.epochs):
        train_one_epoch(model, loader, optimizer, epoch)


class Trainer:
    def __init__(self, model, dataset):
        self.model = model
        self.sampler = DistributedSampler(dataset)
        self.loader = DataLoader(dataset, batch_size=64, sampler=self.sampler)
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def fit(self, epochs):
        for epoch in range(epochs):
            self.sampler.set_epoch(epoch)
            for x, y in self.loader:
                self.optimizer.zero_grad()
                F.cross_entropy(self.model(x), y).backward()
                self.optimizer.step()

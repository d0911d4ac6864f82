import torch
from torch.utils.data import DataLoader, DistributedSampler


class Trainer:
    def __init__(self, model, train_set):
        self.model = model
        self.train_set = train_set
        self.sampler = DistributedSampler(train_set)

    def train_loader(self):
        return DataLoader(self.train_set, batch_size=64, shuffle=True, sampler=self.sampler)  # expect: TL403

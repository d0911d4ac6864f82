import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, IterableDataset


class ShardStream(IterableDataset):
    def __init__(self, shards):
        self.shards = shards

    def __iter__(self):
        for shard in self.shards:
            yield from torch.load(shard)


class TokenStream(ShardStream):
    pass


def train(model, shards, optimizer):
    loader = DataLoader(ShardStream(shards), batch_size=32, num_workers=4)
    for x, y in loader:
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        optimizer.step()


def pretrain(model, shards, optimizer):
    dataset = TokenStream(shards)
    loader = DataLoader(dataset, batch_size=8, num_workers=4)
    for tokens in loader:
        loss = model(tokens, labels=tokens).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

import torch
from torch.utils.data import DataLoader, TensorDataset, random_split


def build_corpus(n):
    return TensorDataset(torch.randint(0, 100, (n, 16)), torch.randint(0, 2, (n,)))


def train(model, optimizer):
    dataset = build_corpus(4000)
    train_set, valid_set = random_split(dataset, [3500, 500])
    loader = DataLoader(train_set, batch_size=32, shuffle=True)
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()

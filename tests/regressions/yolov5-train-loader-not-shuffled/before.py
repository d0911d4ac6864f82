"""The training loader comes from a factory that only shuffles through a DistributedSampler, so a
single-GPU run sees the images in file order every epoch."""
import torch
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class Images(Dataset):
    def __len__(self):
        return 1024

    def __getitem__(self, i):
        return torch.rand(3, 64, 64), torch.tensor(i % 80)


def create_dataloader(dataset, batch_size, rank=-1, workers=8):
    sampler = DistributedSampler(dataset) if rank != -1 else None
    return DataLoader(dataset, batch_size=batch_size, num_workers=workers, sampler=sampler, pin_memory=True)


def train(model, epochs=300, rank=-1):
    train_loader = create_dataloader(Images(), 16, rank=rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.937)
    for epoch in range(epochs):
        if rank != -1:
            train_loader.sampler.set_epoch(epoch)
        for imgs, targets in train_loader:
            loss = torch.nn.functional.cross_entropy(model(imgs), targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    train(torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 64 * 64, 80)))

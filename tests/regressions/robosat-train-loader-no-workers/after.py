"""A loader factory returns the training and validation loaders as a tuple; the training loader
decodes and augments images in the main process."""
import torch
from torch.utils.data import DataLoader, Dataset


class Tiles(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.rand(3, 256, 256), torch.randint(0, 2, (256, 256))


def get_dataset_loaders(batch_size, workers):
    train_loader = DataLoader(
        Tiles(2048), batch_size=batch_size, shuffle=True, drop_last=True, num_workers=workers
    )
    val_loader = DataLoader(Tiles(256), batch_size=batch_size, shuffle=False, num_workers=workers)
    return train_loader, val_loader


def main(epochs=10, workers=4):
    net = torch.nn.Conv2d(3, 2, 3, padding=1)
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-4)
    train_loader, val_loader = get_dataset_loaders(8, workers)
    for epoch in range(epochs):
        for images, masks in train_loader:
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(net(images), masks)
            loss.backward()
            optimizer.step()

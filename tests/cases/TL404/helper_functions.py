import random

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class RandomFlip:
    def __init__(self, p=0.5, seed=None):
        self.p = p
        self.rng = random.Random(seed)

    def __call__(self, image):
        return image.flip(-1) if self.rng.random() < self.p else image


class WorkerSeededFlip:
    def __init__(self, p=0.5):
        self.p = p
        self.rng = None

    def __call__(self, image):
        if self.rng is None:  # built in the worker, on first use
            self.rng = np.random.default_rng(torch.initial_seed())
        return image.flip(-1) if self.rng.random() < self.p else image


class ImageFolder(Dataset):
    def __init__(self, images, transform=None):
        self.images = images
        self.transform = transform

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        image = self.images[index]
        return self.transform(image) if self.transform is not None else image


class AugmentedFolder(Dataset):
    def __init__(self, images):
        self.images = images
        self.flip = RandomFlip(seed=0)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        return self.flip(self.images[index])


images = [torch.randn(3, 32, 32) for _ in range(64)]
train = DataLoader(  # expect: TL404
    ImageFolder(images, transform=RandomFlip()), batch_size=8, num_workers=4
)
positional = DataLoader(  # expect: TL404
    ImageFolder(images, RandomFlip(0.3)), batch_size=8, num_workers=4
)
built_inside = DataLoader(AugmentedFolder(images), batch_size=8, num_workers=4)  # expect: TL404
lazy = DataLoader(ImageFolder(images, transform=WorkerSeededFlip()), batch_size=8, num_workers=4)
plain = DataLoader(ImageFolder(images), batch_size=8, num_workers=4)


def build_loaders(images, workers):
    train_set = ImageFolder(images, transform=RandomFlip(seed=1))
    val_set = ImageFolder(images)
    train_loader = DataLoader(  # expect: TL404
        train_set, batch_size=8, shuffle=True, num_workers=workers
    )
    val_loader = DataLoader(val_set, batch_size=8, num_workers=workers)
    return train_loader, val_loader

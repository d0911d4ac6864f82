"""The augmentation pipeline builds its NumPy and Python generators from the seed once, when it
is made; the dataset calls it for each image, and every loader worker draws the same
sequence from its copy."""
import random

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class Compose:
    def __init__(self, transforms, p=1.0, seed=None):
        self.transforms = transforms
        self.p = p
        self.random_generator = np.random.default_rng(seed)
        self.py_random = random.Random(seed)

    def __call__(self, image):
        if self.py_random.random() >= self.p:
            return image
        for transform in self.transforms:
            if self.random_generator.random() < 0.5:
                image = transform(image)
        return image


class ImageDataset(Dataset):
    def __init__(self, images, transform):
        self.images = images
        self.transform = transform

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        return self.transform(self.images[index])


images = [torch.randn(3, 64, 64) for _ in range(256)]
loader = DataLoader(ImageDataset(images, Compose([lambda x: x.flip(-1)], seed=137)), batch_size=16, num_workers=4)

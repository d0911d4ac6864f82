"""The fix: the pipeline builds its generators again inside each worker, from the seed and the
worker's torch.initial_seed(), on its first call there."""
import random

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class Compose:
    def __init__(self, transforms, p=1.0, seed=None):
        self.transforms = transforms
        self.p = p
        self.seed = seed
        self.random_generator = np.random.default_rng(seed)
        self.py_random = random.Random(seed)
        self._worker_seed = None

    def _check_worker_seed(self):
        current = torch.initial_seed()
        if self._worker_seed != current:
            effective = None if self.seed is None else self.seed + current
            self.random_generator = np.random.default_rng(effective)
            self.py_random = random.Random(effective)
            self._worker_seed = current

    def __call__(self, image):
        self._check_worker_seed()
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

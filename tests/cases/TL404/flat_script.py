import random

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, IterableDataset


class CropDataset(Dataset):
    def __init__(self, images, seed=0):
        self.images = images
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        top = self.rng.integers(0, 8)
        return self.images[index][:, top : top + 24]


class JitterDataset(Dataset):
    def __init__(self, samples):
        self.samples = samples
        self.random_state = np.random.RandomState(1234)

    def __len__(self):
        return len(self.samples)

    def _jitter(self, x):
        return x + self.random_state.normal(0.0, 0.1, size=x.shape)

    def __getitem__(self, index):
        return self._jitter(self.samples[index])


class MaskDataset(Dataset):
    def __init__(self, tokens, seed):
        self.tokens = tokens
        self.generator = torch.Generator().manual_seed(seed)
        self.picker = random.Random(seed)

    def __len__(self):
        return len(self.tokens)

    def __getitem__(self, index):
        mask = torch.rand(self.tokens[index].shape, generator=self.generator) < 0.15
        return self.tokens[index].masked_fill(mask, 0)


class NoiseStream(IterableDataset):
    def __init__(self, length, rng=None):
        self.length = length
        self.rng = rng or np.random.default_rng()

    def __iter__(self):
        for _ in range(self.length):
            yield torch.from_numpy(self.rng.standard_normal(16))


images = [torch.randn(3, 32, 32) for _ in range(64)]
crops = DataLoader(CropDataset(images), batch_size=8, shuffle=True, num_workers=4)  # expect: TL404
jitter_set = JitterDataset(images)
jitter = DataLoader(jitter_set, 8, True, None, None, 2)  # expect: TL404
masks = DataLoader(  # expect: TL404
    MaskDataset(images, seed=3), batch_size=8, num_workers=8, persistent_workers=True
)
noise = DataLoader(NoiseStream(100), batch_size=4, num_workers=2)  # expect: TL404

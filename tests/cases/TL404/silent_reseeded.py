import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, get_worker_info


class SeededPerItem(Dataset):
    def __init__(self, images, seed=0):
        self.images = images
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        self.rng = np.random.default_rng(self.seed + index)
        return self.images[index] * self.rng.random()


class WorkerAware(Dataset):
    def __init__(self, images):
        self.images = images
        self.rng = np.random.default_rng(0)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        info = get_worker_info()
        if info is not None and not hasattr(self, "seeded"):
            self.rng = np.random.default_rng(info.seed)
            self.seeded = True
        return self.images[index] * self.rng.random()


images = [torch.randn(3, 32, 32) for _ in range(64)]
per_item = DataLoader(SeededPerItem(images), batch_size=8, num_workers=4)
aware = DataLoader(WorkerAware(images), batch_size=8, num_workers=4)

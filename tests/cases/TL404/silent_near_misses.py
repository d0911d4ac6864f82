import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, get_worker_info


class CropDataset(Dataset):
    def __init__(self, images, seed=0):
        self.images = images
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        top = self.rng.integers(0, 8)
        return self.images[index][:, top : top + 24]


def reseed(worker_id):
    info = get_worker_info()
    info.dataset.rng = np.random.default_rng(info.seed)


class ShuffledFiles(Dataset):
    """The generator only orders the file list, once, in the main process."""

    def __init__(self, files, seed=0):
        rng = np.random.default_rng(seed)
        self.files = list(rng.permutation(files))
        self.order_rng = np.random.RandomState(seed)
        self.order = self.order_rng.permutation(len(files))

    def __len__(self):
        return len(self.files)

    def __getitem__(self, index):
        return torch.load(self.files[self.order[index]])


class GlobalNumpy(Dataset):
    """`np.random` itself is reseeded in each worker by PyTorch (since 1.9)."""

    def __init__(self, images):
        self.images = images

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        return self.images[index] * np.random.uniform(0.5, 1.5)


images = [torch.randn(3, 32, 32) for _ in range(64)]
main_process = DataLoader(CropDataset(images), batch_size=8, num_workers=0)
default_workers = DataLoader(CropDataset(images), batch_size=8)
reseeded = DataLoader(CropDataset(images), batch_size=8, num_workers=4, worker_init_fn=reseed)
ordered = DataLoader(ShuffledFiles(["a.pt", "b.pt"]), batch_size=2, num_workers=4)
global_rng = DataLoader(GlobalNumpy(images), batch_size=8, num_workers=4)
options = {"num_workers": 4, "worker_init_fn": reseed}
unpacked = DataLoader(CropDataset(images), batch_size=8, **options)

import secrets

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class Seedable:
    def __init__(self, seed=None):
        self.seed(seed or secrets.randbits(64))

    def seed(self, seed):
        self.rng_seed = seed
        self.setup_rngs()

    def setup_rngs(self):
        self.np_rng = np.random.default_rng(seed=self.rng_seed)
        self.random_generator = self.np_rng
        self.torch_rng = torch.Generator()
        self.torch_rng.manual_seed(self.rng_seed + 13)


class SignalDataset(Seedable, Dataset):
    def __init__(self, length, seed=None):
        super().__init__(seed)
        self.length = length

    def __len__(self):
        return self.length

    def __getitem__(self, index):
        phase = self.random_generator.uniform(0, 2 * np.pi)
        return torch.sin(torch.linspace(0, 6.28, 128) + phase)


class ReseededPerWorker(SignalDataset):
    def worker_setup(self, worker_id):
        self.seed(self.rng_seed + worker_id)


def reseed(worker_id):
    torch.utils.data.get_worker_info().dataset.worker_setup(worker_id)


signals = DataLoader(SignalDataset(1000), batch_size=32, num_workers=4)  # expect: TL404
seeded = DataLoader(ReseededPerWorker(1000), batch_size=32, num_workers=4, worker_init_fn=reseed)


class SeededPerIndex(SignalDataset):
    def __getitem__(self, index):
        self.seed(index)
        return super().__getitem__(index)


per_index = DataLoader(SeededPerIndex(1000), batch_size=32, num_workers=4)

"""The fix: a loader whose worker_init_fn reseeds each worker's copy of the dataset from the
worker's own seed."""
import secrets

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, get_worker_info


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
        snr = self.random_generator.uniform(0.0, 20.0)
        phase = self.random_generator.uniform(0.0, 2 * np.pi)
        signal = torch.exp(1j * (torch.linspace(0, 50, 1024) + phase))
        return signal + torch.randn(1024, dtype=torch.cfloat) * 10 ** (-snr / 20)


def init_worker_seed(worker_id):
    info = get_worker_info()
    info.dataset.seed(info.dataset.rng_seed + worker_id)


loader = DataLoader(
    SignalDataset(10_000, seed=1234), batch_size=64, num_workers=4, worker_init_fn=init_worker_seed
)
for batch in loader:
    pass

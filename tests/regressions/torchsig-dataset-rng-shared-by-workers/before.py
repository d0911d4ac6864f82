"""A Seedable base builds the dataset's NumPy and torch generators when the dataset is made;
__getitem__ draws the signal's impairments from them, and the loader's workers each get a copy
in the same state."""
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
        snr = self.random_generator.uniform(0.0, 20.0)
        phase = self.random_generator.uniform(0.0, 2 * np.pi)
        signal = torch.exp(1j * (torch.linspace(0, 50, 1024) + phase))
        return signal + torch.randn(1024, dtype=torch.cfloat) * 10 ** (-snr / 20)


loader = DataLoader(SignalDataset(10_000, seed=1234), batch_size=64, num_workers=4)
for batch in loader:
    pass

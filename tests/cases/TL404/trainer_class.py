import numpy as np
import lightning as L
from torch.utils.data import DataLoader, Dataset, random_split


class SpecAugmentDataset(Dataset):
    def __init__(self, spectrograms, seed=0):
        self.spectrograms = spectrograms
        self.rng = np.random.RandomState(seed)

    def __len__(self):
        return len(self.spectrograms)

    def __getitem__(self, index):
        spec = self.spectrograms[index].clone()
        start = self.rng.randint(0, spec.shape[-1] - 10)
        spec[..., start : start + 10] = 0
        return spec


class SpeechData(L.LightningDataModule):
    def __init__(self, spectrograms, workers=4):
        super().__init__()
        self.spectrograms = spectrograms
        self.workers = workers

    def setup(self, stage=None):
        full = SpecAugmentDataset(self.spectrograms)
        self.train_set, self.val_set = random_split(full, [0.9, 0.1])

    def train_dataloader(self):
        return DataLoader(  # expect: TL404
            self.train_set, batch_size=16, shuffle=True, num_workers=self.workers
        )

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=16, num_workers=0)

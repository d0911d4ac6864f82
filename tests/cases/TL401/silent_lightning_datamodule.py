# Near-misses: the hook shuffles, or a sampler decides the order; validation needs no shuffle.
import lightning as L
from torch.utils.data import DataLoader, RandomSampler


class DigitsData(L.LightningDataModule):
    def __init__(self, train_set, val_set):
        super().__init__()
        self.train_set = train_set
        self.val_set = val_set

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=64, shuffle=True, num_workers=4)

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=64, num_workers=4)


class SampledData(L.LightningDataModule):
    def __init__(self, train_set):
        super().__init__()
        self.train_set = train_set

    def train_dataloader(self):
        loader = DataLoader(self.train_set, sampler=RandomSampler(self.train_set), batch_size=8)
        return loader

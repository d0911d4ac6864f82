# Lightning's Trainer trains on what a LightningDataModule's `train_dataloader()` returns.
import lightning as L
from torch.utils.data import DataLoader


class DigitsData(L.LightningDataModule):
    def __init__(self, train_set, val_set):
        super().__init__()
        self.train_set = train_set
        self.val_set = val_set

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=64, num_workers=4)  # expect: TL401

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=64, num_workers=4)

import numpy as np
from torch.utils.data import Dataset


class FlipDataset(Dataset):
    def __init__(self, images, seed=0):
        self.images = images
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        image = self.images[index]
        return image.flip(-1) if self.rng.random() < 0.5 else image

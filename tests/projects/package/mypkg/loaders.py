from torch.utils.data import DataLoader

from mypkg.data import FlipDataset


def train_loader(images):
    return DataLoader(FlipDataset(images), batch_size=8, shuffle=True, num_workers=4)  # project: TL404


def eval_loader(images):
    return DataLoader(FlipDataset(images), batch_size=8)

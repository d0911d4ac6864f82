import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Trainer:
    def __init__(self, model: nn.Module, train_ds: Dataset, val_ds: Dataset, batch_size=32):
        self.model = model
        self.train_loader = DataLoader(  # expect: TL401
            train_ds,
            batch_size=batch_size,
            shuffle=False,
            num_workers=4,
            drop_last=True,
        )
        self.val_loader = DataLoader(val_ds, batch_size=batch_size, num_workers=4)
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)

    def train_epoch(self):
        self.model.train()
        for batch in self.train_loader:
            loss = self.model(**batch).loss
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()

    @torch.no_grad()
    def validate(self):
        self.model.eval()
        return sum(self.model(**batch).loss.item() for batch in self.val_loader)

    def fit(self, epochs):
        for epoch in range(epochs):
            self.train_epoch()
            print(epoch, self.validate())

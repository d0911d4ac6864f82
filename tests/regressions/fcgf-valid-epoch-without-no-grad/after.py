"""A base trainer's train() calls self._valid_epoch(), which a subclass implements by running the
model in eval mode over a manually driven loader iterator, with autograd on."""
import torch
from torch import nn


class AlignmentTrainer:
    def __init__(self, model, train_loader, val_loader, epochs=50, val_every=5):
        self.model = model
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.epochs = epochs
        self.val_every = val_every
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.8)

    def train(self):
        if self.val_loader is not None:
            with torch.no_grad():
                print("baseline", self._valid_epoch())
        for epoch in range(1, self.epochs + 1):
            self._train_epoch()
            if self.val_loader is not None and epoch % self.val_every == 0:
                with torch.no_grad():
                    stats = self._valid_epoch()
                print(epoch, stats)


class ContrastiveTrainer(AlignmentTrainer):
    def _train_epoch(self):
        self.model.train()
        for x, y in self.train_loader:
            self.optimizer.zero_grad()
            loss = nn.functional.mse_loss(self.model(x), y)
            loss.backward()
            self.optimizer.step()

    def _valid_epoch(self):
        self.model.eval()
        errors = []
        data_iter = iter(self.val_loader)
        for _ in range(len(self.val_loader)):
            x, y = next(data_iter)
            errors.append(nn.functional.mse_loss(self.model(x), y).item())
        return sum(errors) / len(errors)


if __name__ == "__main__":
    data = [(torch.randn(16, 32), torch.randn(16, 32)) for _ in range(4)]
    ContrastiveTrainer(nn.Sequential(nn.Linear(32, 32), nn.BatchNorm1d(32)), data, data).train()

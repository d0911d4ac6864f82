# A base class's train(loader) runs a subclass's _train_epoch(); only test() switches modes.
import torch
from torch import nn


class EpochTrainer:
    def train(self, loader):
        return self._train_epoch(loader)

    def test(self, loader):
        return self._test_epoch(loader)


class ClassifierTrainer(EpochTrainer):
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def _test_epoch(self, loader):
        self.model.eval()
        with torch.no_grad():
            return [self.model(x).argmax(-1) for x, _ in loader]

    def _train_epoch(self, loader):
        for x, y in loader:
            self.optimizer.zero_grad()
            nn.functional.cross_entropy(self.model(x), y).backward()
            self.optimizer.step()


def fit(model, train_loader, val_loader, epochs):
    trainer = ClassifierTrainer(model)
    for epoch in range(epochs):
        trainer.train(train_loader)
        trainer.test(val_loader)  # expect: TL105

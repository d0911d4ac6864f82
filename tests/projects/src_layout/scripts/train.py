import torch
import torch.nn.functional as F

from trainer.loop import LoggingTrainer, Trainer
from trainer.model import Classifier, LogitsClassifier


def run_without_zero_grad(model, loader, criterion):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    trainer = Trainer(model, optimizer, criterion)
    for batch in loader:
        trainer.train_step(batch)  # project: TL102


def run_clean(model, loader, criterion):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    trainer = LoggingTrainer(model, optimizer, criterion)
    for batch in loader:
        loss = trainer.clean_step(batch)
        trainer.log(loss)


def probabilities_into_cross_entropy(loader):
    model = Classifier()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        optimizer.zero_grad()
        out = model(x)
        loss = F.cross_entropy(out, y)  # project: TL109
        loss.backward()
        optimizer.step()


def logits_into_cross_entropy(loader):
    model = LogitsClassifier()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()


class EpochTrainer(Trainer):
    def fit(self, loader):
        for batch in loader:
            self.train_step(batch)  # project: TL102

    def fit_clean(self, loader):
        for batch in loader:
            self.clean_step(batch)

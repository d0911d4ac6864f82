# Probabilities reach cross-entropy through a tuple a forward returns, through a loss helper's
# parameter, and through `self(x)` in a LightningModule's step.
import lightning as L
import torch
import torch.nn.functional as F
from torch import nn


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(64, 32)
        self.adv = nn.Linear(32, 1)
        self.aux = nn.Sequential(nn.Linear(32, 10), nn.Softmax(dim=1))

    def forward(self, x):
        h = self.body(x)
        return self.adv(h), self.aux(h)


D = Discriminator()
optimizer = torch.optim.Adam(D.parameters())
aux_criterion = nn.CrossEntropyLoss()
for x, y in [(torch.randn(8, 64), torch.randint(0, 10, (8,)))] * 4:
    validity, label = D(x)
    loss = aux_criterion(label, y) + validity.mean()  # expect: TL109
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()


def aux_loss(y_hat, y):
    return F.cross_entropy(y_hat, y)  # expect: TL109


def train(model, loader, opt):
    for x, y in loader:
        y_hat = F.softmax(model(x), dim=-1)
        loss = aux_loss(y_hat, y)
        loss.backward()
        opt.step()
        opt.zero_grad()


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(10, 3)

    def forward(self, x):
        return F.softmax(self.layer(x), dim=1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self(x), y)  # expect: TL109

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters())

# Near-misses: the tuple item that reaches the loss is the logits, the helper gets logits, and
# the module's forward returns logits (the softmax is for prediction only).
import lightning as L
import torch
import torch.nn.functional as F
from torch import nn


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(64, 32)
        self.adv = nn.Linear(32, 10)
        self.aux = nn.Sequential(nn.Linear(32, 10), nn.Softmax(dim=1))

    def forward(self, x):
        h = self.body(x)
        return self.adv(h), self.aux(h)


D = Discriminator()
optimizer = torch.optim.Adam(D.parameters())
for x, y in [(torch.randn(8, 64), torch.randint(0, 10, (8,)))] * 4:
    logits, probs = D(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()


def aux_loss(y_hat, y):
    return F.cross_entropy(y_hat, y)


def train(model, loader, opt):
    for x, y in loader:
        loss = aux_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(10, 3)

    def forward(self, x):
        return self.layer(x)

    def predict_step(self, batch, batch_idx):
        return F.softmax(self(batch), dim=1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self(x), y)

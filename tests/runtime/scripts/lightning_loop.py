"""A LightningModule fitted by Lightning's Trainer, which the script limits to one batch of one
epoch (as a bug-report template does): torchlint runs the Trainer with the check's own limits."""

import sys

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 3))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)  # line: loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.cross_entropy(self.net(x), y))

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-2)


torch.manual_seed(0)
x = torch.randn(320, 8)
y = (x[:, 0] > 0).long() + (x[:, 1] > 0).long()
train, val = random_split(TensorDataset(x, y), [256, 64])
callbacks = []
if "--with-callback" in sys.argv:  # the one-line integration, added by hand
    from torchlint.integrations.lightning import TorchlintCallback

    callbacks.append(TorchlintCallback())
trainer = L.Trainer(
    max_epochs=1,
    limit_train_batches=1,
    limit_val_batches=1,
    logger=False,
    enable_progress_bar=False,
    enable_model_summary=False,
    callbacks=callbacks,
)
trainer.fit(Classifier(), DataLoader(train, batch_size=16, shuffle=True), DataLoader(val, batch_size=16))

"""A Lightning module for video prediction whose one-cycle schedule is sized in optimizer steps
and asked to step every batch, while the module's own scheduler hook steps it by epoch."""
import pytorch_lightning as pl
import torch
from torch import nn


def build_optimizer(model, lr, epochs, steps_per_epoch):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=lr, total_steps=epochs * steps_per_epoch
    )
    return optimizer, scheduler


class Predictor(pl.LightningModule):
    def __init__(self, lr=1e-3, epochs=100, steps_per_epoch=500):
        super().__init__()
        self.save_hyperparameters()
        self.model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 3, padding=1))
        self.criterion = nn.MSELoss()

    def configure_optimizers(self):
        optimizer, scheduler = build_optimizer(
            self.model, self.hparams.lr, self.hparams.epochs, self.hparams.steps_per_epoch
        )
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}

    def training_step(self, batch, batch_idx):
        x, y = batch
        return self.criterion(self.model(x), y)

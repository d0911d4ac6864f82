"""A LightningModule whose per-step preprocessing builds index tensors on the host and moves them."""
import lightning.pytorch as pl
import torch
from torch import nn


class FlowMatchingModule(pl.LightningModule):
    def __init__(self, dim=2, times=5):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim + 1, 64), nn.SiLU(), nn.Linear(64, dim))
        self.times = times

    def preprocess_batch(self, X):
        batch_size = X.shape[0]
        t_select = torch.randint(self.times - 1, size=(batch_size,)).to(X.device)
        x0 = X[torch.arange(batch_size, device=X.device), t_select]
        x1 = X[torch.arange(batch_size, device=X.device), t_select + 1]
        return x0, x1

    def training_step(self, batch, batch_idx):
        x0, x1 = self.preprocess_batch(batch)
        t = torch.rand(x0.shape[0], 1, device=x0.device)
        xt = (1 - t) * x0 + t * x1
        loss = nn.functional.mse_loss(self.net(torch.cat([xt, t], dim=-1)), x1 - x0)
        self.log("train/loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)

import torch
from lightning.pytorch import LightningModule


class Module(LightningModule):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def training_step(self, batch, batch_idx):
        out = self.model(**batch)
        self.log("lr", self.optimizers().param_groups[0]["lr"], on_step=True)
        self.log("loss", out.loss, sync_dist=True, on_step=True, on_epoch=False)  # expect: TL606
        return out.loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=3e-4)

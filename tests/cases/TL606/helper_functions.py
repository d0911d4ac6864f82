import pytorch_lightning as pl
import torch


class Regressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        metrics = {"loss": loss, "rmse": loss.sqrt()}
        self.log_dict(metrics, prog_bar=True, on_step=True, on_epoch=True, sync_dist=True)  # expect: TL606
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

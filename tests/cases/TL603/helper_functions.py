import pytorch_lightning as pl
import torch


class Regressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        optimizer = self.optimizers()
        scheduler = self.lr_schedulers()
        loss = torch.nn.functional.mse_loss(self.net(batch[0]), batch[1])
        optimizer.step()  # expect: TL603
        scheduler.step()  # expect: TL603
        return loss

    def configure_optimizers(self):
        optimizer = torch.optim.SGD(self.parameters(), lr=0.1)
        return [optimizer], [torch.optim.lr_scheduler.StepLR(optimizer, 10)]

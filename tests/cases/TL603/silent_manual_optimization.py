import pytorch_lightning as pl
import torch


class AccumulatingModel(pl.LightningModule):
    def __init__(self, net, accumulate=4):
        super().__init__()
        self.net = net
        self.accumulate = accumulate
        self.automatic_optimization = False

    def training_step(self, batch, batch_idx):
        optimizer = self.optimizers()
        scheduler = self.lr_schedulers()
        loss = self.net(batch).mean() / self.accumulate
        self.manual_backward(loss)
        if (batch_idx + 1) % self.accumulate == 0:
            optimizer.step()
            optimizer.zero_grad()
            scheduler.step()

    def configure_optimizers(self):
        optimizer = torch.optim.SGD(self.parameters(), lr=0.1)
        return [optimizer], [torch.optim.lr_scheduler.StepLR(optimizer, 10)]

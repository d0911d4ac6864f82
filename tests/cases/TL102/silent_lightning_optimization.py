# Manual optimization that clears its optimizer, and automatic optimization (Lightning
# clears, backpropagates and steps around `training_step` itself).
import lightning.pytorch as pl
import torch.nn.functional as F


class ManualModule(pl.LightningModule):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.automatic_optimization = False

    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        opt.zero_grad()
        x, y = batch
        loss = F.cross_entropy(self.net(x), y)
        self.manual_backward(loss)
        opt.step()


class AutomaticModule(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self.net(x), y)

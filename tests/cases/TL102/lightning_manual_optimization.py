# With `self.automatic_optimization = False` the LightningModule steps its optimizers itself,
# in `training_step`, which Lightning calls once per batch: without `opt.zero_grad()` each
# step applies the gradients of every batch so far.
import lightning.pytorch as pl
import torch.nn.functional as F


class ManualModule(pl.LightningModule):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.automatic_optimization = False

    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        x, y = batch
        loss = F.cross_entropy(self.net(x), y)
        self.manual_backward(loss)  # expect: TL102
        opt.step()
        return loss

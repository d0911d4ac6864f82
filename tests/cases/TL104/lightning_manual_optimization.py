# Manual optimization that steps before its backward applies the previous batch's gradients.
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
        opt.step()  # expect: TL104
        x, y = batch
        loss = F.cross_entropy(self.net(x), y)
        self.manual_backward(loss)

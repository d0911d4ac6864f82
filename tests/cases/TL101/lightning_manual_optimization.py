# Under manual optimization Lightning steps nothing: a `training_step` that backpropagates
# and never calls `opt.step()` never trains.
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
        self.manual_backward(loss)  # expect: TL101
        return loss

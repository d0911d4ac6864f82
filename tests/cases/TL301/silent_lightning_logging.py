# The tensor handed to `self.log` is read when Lightning writes the log; a sync every N
# batches, or in `validation_step`, or in a class that only has a method of that name, is not
# a per-step sync.
import lightning.pytorch as pl
import torch.nn.functional as F


class Classifier(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self.net(x), y)
        self.log("train_loss", loss)
        if batch_idx % 100 == 0:
            print(loss.item())
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.accuracy.append((self.net(x).argmax(1) == y).float().mean().item())


class Recipe:
    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self.net(x), y).item()

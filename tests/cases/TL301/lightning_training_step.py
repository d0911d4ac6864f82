# Lightning calls `training_step` once per batch: a host sync in it runs on every step, like
# one in a hand-written loop. So does one in a Hugging Face Trainer's `compute_loss`.
import lightning.pytorch as pl
import torch.nn.functional as F
from transformers import Trainer


class Classifier(pl.LightningModule):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self.net(x), y)
        self.log("train_loss", loss.item())  # expect: TL301
        return loss


class Base(pl.LightningModule):
    pass


class Regressor(Base):
    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x), y)
        print(f"loss {loss.item():.4f}")  # expect: TL301
        return loss


class WeightedTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False):
        outputs = model(**inputs)
        loss = outputs.loss * self.weight
        self.history.append(loss.item())  # expect: TL301
        return (loss, outputs) if return_outputs else loss

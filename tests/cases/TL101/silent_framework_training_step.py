# A Hugging Face Trainer's `training_step` runs backward and the Trainer steps after it;
# under automatic optimization Lightning steps after `training_step`.
import lightning.pytorch as pl
from transformers import Trainer


class ClippedTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        model.train()
        loss = self.compute_loss(model, inputs)
        self.accelerator.backward(loss)
        return loss.detach()


class AutomaticModule(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        return self.net(batch).mean()

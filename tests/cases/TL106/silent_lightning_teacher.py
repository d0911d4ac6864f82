# `training_step` of a LightningModule is a training step even though it never calls backward:
# Lightning backpropagates the loss it returns, so gradients must stay on there.
import lightning.pytorch as pl
import torch.nn.functional as F


class Distiller(pl.LightningModule):
    def __init__(self, student, teacher):
        super().__init__()
        self.student = student
        self.teacher = teacher

    def training_step(self, batch, batch_idx):
        x, y = batch
        self.teacher.eval()
        soft = self.teacher(x).softmax(-1)
        logits = self.student(x)
        return F.cross_entropy(logits, y) + F.kl_div(logits.log_softmax(-1), soft)

import torch


class Trainer:
    def __init__(self, model, logger):
        self.model = model
        self.logger = logger

    def log(self, name, value, **kwargs):
        self.logger.write(name, float(value))

    def training_step(self, batch, batch_idx):
        loss = self.model(batch).mean()
        self.log("loss", loss, sync_dist=True, on_step=True)
        return loss


def training_step(module, batch):
    loss = module(batch).mean()
    torch.distributed.all_reduce(loss.detach())
    return loss

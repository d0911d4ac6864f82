import torch


def move_to_device(batch, device):
    return {k: v.to(device) for k, v in batch.items()}


class Trainer:
    def __init__(self, model, optim, loader, device):
        self.model, self.optim, self.loader, self.device = model, optim, loader, device

    def train_step(self, batch):
        metrics = {}
        # read from the loader's batch before it is moved: host tensors, no device sync
        if (instance_mask := batch.get("instance_mask")) is not None:
            metrics["masked"] = (~instance_mask).sum().item()
        metrics["tokens"] = batch["attention_mask"].sum().item()
        self.optim.zero_grad()
        batch = move_to_device(batch, self.device)
        loss = self.model(**batch).mean()
        loss.backward()
        self.optim.step()
        # after the move: a device sync on every step
        metrics["padding"] = (~batch["attention_mask"].bool()).sum().item()  # expect: TL301
        metrics["loss"] = loss.item()  # expect: TL301
        return metrics

    def fit(self):
        for batch in self.loader:
            self.train_step(batch)

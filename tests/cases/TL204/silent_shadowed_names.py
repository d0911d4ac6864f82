import torch


class GradScaler:
    """A project class that happens to share the name."""


def autocast(enabled=True):
    return torch.autocast("cuda", enabled=enabled)


scaler = GradScaler()
with autocast():
    pass

# The deprecated spelling as the fallback for an older PyTorch, after the modern call failed.
import torch


class NativeScaler:
    def __init__(self, device="cuda"):
        try:
            self._scaler = torch.amp.GradScaler(device=device)
        except (AttributeError, TypeError):
            self._scaler = torch.cuda.amp.GradScaler()


if hasattr(torch, "amp") and hasattr(torch.amp, "autocast"):
    autocast = torch.amp.autocast
else:
    autocast = torch.cuda.amp.autocast

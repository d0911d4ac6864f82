"""Builds the model on the GPU."""

import torch

from nets import build


def build_on_gpu() -> torch.nn.Module:
    return build().cuda()

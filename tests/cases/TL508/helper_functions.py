# Helpers: a tensor branch of a type test, and tensors the function builds, "moved" by statements.
import math

import numpy as np
import torch


def as_direction(vertices, direction):
    device = vertices.device
    if isinstance(direction, list):
        direction = torch.tensor(direction, dtype=torch.float32, device=device)
    elif isinstance(direction, np.ndarray):
        direction = torch.from_numpy(direction).to(device)
    elif torch.is_tensor(direction):
        direction.to(device)  # expect: TL508
    return direction


def as_half(x):
    if isinstance(x, torch.Tensor):
        x.half()  # expect: TL508
    return x


def sinusoidal_table(max_len, d_model, device=None):
    pe = torch.zeros(max_len, d_model)
    position = torch.arange(0, max_len).unsqueeze(1).float()
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    if device is not None:
        pe.to(device=device)  # expect: TL508
    return pe


def mask_for(lengths, device):
    mask = torch.arange(int(lengths.max()))[None, :] < lengths[:, None]
    mask = mask.float()
    mask.cuda()  # expect: TL508
    return mask

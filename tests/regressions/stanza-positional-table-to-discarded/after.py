"""A sinusoidal table built on the host, moved with an assignment."""
import math

import torch
from torch import nn


class SinusoidalEncoding(nn.Module):
    def __init__(self, model_dim, max_len=512, device=None):
        super().__init__()
        self.register_buffer("pe", self.build_position(model_dim, max_len, device))

    @staticmethod
    def build_position(model_dim, max_len, device=None):
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, model_dim, 2) * (-math.log(10000.0) / model_dim))
        pe = torch.zeros(max_len, model_dim)
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        if device is not None:
            pe = pe.to(device=device)
        return pe

    def forward(self, x):
        return self.pe[x]

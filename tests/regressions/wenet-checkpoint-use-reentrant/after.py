"""An encoder that checkpoints each layer without saying which checkpoint implementation to use."""
import torch
import torch.utils.checkpoint as ckpt
from torch import nn


class Encoder(nn.Module):
    def __init__(self, dim=256, layers=6, gradient_checkpointing=True):
        super().__init__()
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(dim, 4, batch_first=True) for _ in range(layers)
        )
        self.gradient_checkpointing = gradient_checkpointing

    def forward_layers(self, xs):
        for layer in self.layers:
            xs = layer(xs)
        return xs

    def forward_layers_checkpointed(self, xs):
        for layer in self.layers:
            xs = ckpt.checkpoint(layer.__call__, xs, use_reentrant=False)
        return xs

    def forward(self, xs):
        if self.gradient_checkpointing and self.training:
            return self.forward_layers_checkpointed(xs)
        return self.forward_layers(xs)

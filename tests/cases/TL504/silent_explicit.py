import torch
from torch.utils.checkpoint import checkpoint, checkpoint_sequential


def forward(block, blocks, x, options):
    y = checkpoint(block, x, use_reentrant=True)
    z = checkpoint_sequential(blocks, 2, y, False)
    u = checkpoint_sequential(blocks, 2, z, use_reentrant=False)
    return checkpoint(block, u, **options)


if torch.__version__ >= "1.11":
    out = checkpoint(torch.sin, torch.ones(2), use_reentrant=False)
else:
    out = checkpoint(torch.sin, torch.ones(2))

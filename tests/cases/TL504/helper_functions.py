import torch.utils.checkpoint as cp
from torch.utils.checkpoint import checkpoint_sequential


def run_trunk(trunk, x, segments=4):
    return checkpoint_sequential(trunk, segments, x)  # expect: TL504


def run_block(block, *inputs):
    return cp.checkpoint(block, *inputs)  # expect: TL504


def run_block_explicit(block, *inputs):
    return cp.checkpoint(block, *inputs, use_reentrant=False)

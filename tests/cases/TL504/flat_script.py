import torch
from torch.utils.checkpoint import checkpoint

layer = torch.nn.Linear(8, 8)
x = torch.randn(2, 8, requires_grad=True)
y = checkpoint(layer, x)  # expect: TL504
z = torch.utils.checkpoint.checkpoint(layer, y, preserve_rng_state=False)  # expect: TL504
w = checkpoint(layer, z, use_reentrant=False)

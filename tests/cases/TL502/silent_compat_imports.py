import torch

try:
    from torch.func import grad, vmap
except ImportError:
    from functorch import grad, vmap

from functorch.compile import aot_function
from functorch import make_fx

if hasattr(torch, "linalg"):
    factor = torch.linalg.qr
else:
    factor = torch.qr

batched = vmap(grad(torch.sin))
compiled = aot_function(torch.sin, print)

# With `capture_scalar_outputs = True`, dynamo keeps `.item()` in the graph; an uncompiled
# module's forward may read what it likes, and a non-tensor `.item()` is no tensor read.
import torch
import torch._dynamo
from torch import nn

torch._dynamo.config.capture_scalar_outputs = True


@torch.compile
def scaled(x):
    return x * x.amax().item()


class Probe(nn.Module):
    def forward(self, x):
        print(x)
        return x


probe = Probe()
compiled = torch.compile(scaled)

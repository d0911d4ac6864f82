from torch import nn


class Adapter(nn.Module):
    def __init__(self, dim, require_grad=True):
        super().__init__()
        self.require_grad = require_grad
        self.proj = nn.Linear(dim, dim)
        for p in self.proj.parameters():
            p.requires_grad = require_grad

from torch import nn
from torch.utils import checkpoint as ckpt


class Encoder(nn.Module):
    def __init__(self, blocks, use_checkpoint=True):
        super().__init__()
        self.blocks = nn.ModuleList(blocks)
        self.use_checkpoint = use_checkpoint

    def forward(self, x):
        for block in self.blocks:
            if self.use_checkpoint and self.training:
                x = ckpt.checkpoint(block, x)  # expect: TL504
            else:
                x = block(x)
        return x

# A symmetric log that compresses magnitudes (relative position tables): log(1 + |x|) of
# values that are 0 or not small.
import math

import torch

coords = torch.arange(-7, 8, dtype=torch.float32) / 7
table = torch.sign(coords) * torch.log2(1.0 + coords.abs()) / math.log2(8)
other = torch.sign(coords) * torch.log(1.0 + torch.abs(coords))

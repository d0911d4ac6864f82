"""Crashes with a message coloured by terminal escapes, as rich tracebacks print them."""

import torch

torch.manual_seed(0)
raise RuntimeError("\x1b[1;31mshard 3 is corrupt\x1b[0m")  # line: raise

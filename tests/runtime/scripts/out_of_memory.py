"""Asks for far more memory than any machine has."""

import torch

buffer = torch.empty(1 << 50, dtype=torch.uint8)  # line: alloc

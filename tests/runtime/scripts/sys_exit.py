"""Exits before training when a requirement is missing."""

import sys

import torch
from torch import nn

model = nn.Linear(4, 2)
if not torch.cuda.is_available():
    sys.exit("this script needs a GPU")  # line: exit

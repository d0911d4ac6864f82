"""A value-head wrapper that loads downloaded head weights without weights_only."""
import torch
from torch import nn


class ValueHeadModel(nn.Module):
    def __init__(self, hidden_size=768):
        super().__init__()
        self.v_head = nn.Linear(hidden_size, 1)

    def load_head(self, cached_path):
        state_dict = torch.load(cached_path, map_location=torch.device("cpu"), weights_only=True)
        self.v_head.load_state_dict(
            {k.removeprefix("v_head."): v for k, v in state_dict.items() if k.startswith("v_head.")}
        )

# The result is kept, or nothing shows that the receiver is a tensor.
import torch


def move(x, y, device, extra):
    x = x.to(device)
    y = y.cuda()
    extra.to(device)  # a parameter of any type: its own `.to()` may convert in place
    table = torch.zeros(3)
    table = table.to(device)
    return x, y, table


def from_config(config, device):
    state = config.build_state()
    state.to(device)
    if isinstance(state, torch.nn.Module):
        state.cuda()
    return torch.zeros(2).to(device)

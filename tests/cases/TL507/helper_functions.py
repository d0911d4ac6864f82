import torch as th
from torch import exp, log


def softplus(x):
    return log(1 + exp(x))  # expect: TL507


def growth(rate, t):
    return 100 * (th.exp(rate * t) - 1)  # expect: TL507


def log_partition(scores, dim=-1):
    return th.log(th.sum(th.exp(scores), dim=dim, keepdim=True))  # expect: TL507


def total_frames(log_durations):
    # rounded, but not the value of the difference: `widths` keeps the cancelled digits
    widths = th.exp(log_durations) - 1  # expect: TL507
    return widths, th.round(log_durations)


def growth_per_element(log_rates):
    # the size of the result is a whole number, its values are not
    increase = th.exp(log_rates) - 1  # expect: TL507
    return increase / increase.numel()

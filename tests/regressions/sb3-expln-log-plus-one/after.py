"""Exploration noise whose standard deviation grows like log(x + 1) above zero."""
import torch as th


def get_std(log_std, use_expln=True):
    if use_expln:
        below = th.exp(log_std) * (log_std <= 0)
        above = (th.log1p(log_std * (log_std > 0)) + 1.0) * (log_std > 0)
        return below + above
    return th.exp(log_std)


if __name__ == "__main__":
    print(get_std(th.linspace(-3, 3, 7)))

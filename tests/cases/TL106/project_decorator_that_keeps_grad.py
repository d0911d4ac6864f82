# A project decorator that only times the function: gradients stay on.
import time

import torch


def timed(fn):
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        result = fn(*args, **kwargs)
        print(time.perf_counter() - start)
        return result

    return wrapper


@timed
def validate(model, loader):
    model.eval()
    for x in loader:
        model(x)  # expect: TL106

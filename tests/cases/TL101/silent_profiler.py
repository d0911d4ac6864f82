# A layer profiler: it times forward and backward passes; there is nothing to step.
import torch
from ultralytics.utils.torch_utils import time_sync


def profile(x, ops, n=10):
    for m in ops:
        for _ in range(n):
            t0 = time_sync()
            y = m(x)
            t1 = time_sync()
            y.sum().backward()
            t2 = time_sync()
            print(t1 - t0, t2 - t1)


optimizer_name = "sgd"  # the file mentions an optimizer
profile(torch.randn(2, 4, requires_grad=True), [torch.nn.Linear(4, 4)])

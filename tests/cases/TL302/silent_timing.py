import time

import torch
import torch.nn.functional as F


def benchmark(model, loader, optimizer):
    times = []
    for x, y in loader:
        torch.cuda.synchronize()
        start = time.perf_counter()
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return sum(times) / len(times)


def timed_with_events(model, loader, optimizer):
    for x, y in loader:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
        end.record()
        torch.cuda.synchronize()
        print(start.elapsed_time(end))

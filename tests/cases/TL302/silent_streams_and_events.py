import time

import torch


def train(model, loader, optimizer, copy_stream):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    for x in loader:
        torch.cuda.current_stream().wait_stream(copy_stream)
        start.record()
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()
        end.record()
        torch.cuda.synchronize()
        print(start.elapsed_time(end))


def train_when_available(model, loader, optimizer):
    for x in loader:
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()
        if torch.cuda.is_available() and time.time() > 0:
            pass

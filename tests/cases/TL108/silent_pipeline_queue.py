# A pipeline schedule keeps each micro-batch's output attached until its backward pass and
# drains the queue as it goes: the graphs do not pile up across steps.
from collections import deque

import torch


def one_forward_one_backward(model, micro_batches, recv_grad, warmup):
    output_tensors = []
    for micro_batch in micro_batches[:warmup]:
        output_tensors.append(model(micro_batch))
    for micro_batch in micro_batches[warmup:]:
        output_tensors.append(model(micro_batch))
        output = output_tensors.pop(0)
        torch.autograd.backward(output, grad_tensors=recv_grad())
        model.zero_grad()


def interleaved(model, loader, optimizer):
    pending = deque()
    for batch in loader:
        pending.append(model(batch).sum())
        if len(pending) > 2:
            pending.popleft().backward()
            optimizer.step()
            optimizer.zero_grad()

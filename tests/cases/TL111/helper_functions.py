import torch
import torch.nn.functional as F


def forward_backward(model, optimizer, x, y, micro_batches):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y) / micro_batches
    loss.backward()
    return loss.detach()


def train(model, optimizer, loader, micro_batches=4):
    for x, y in loader:
        for xs, ys in zip(x.chunk(micro_batches), y.chunk(micro_batches)):
            forward_backward(model, optimizer, xs, ys, micro_batches)  # expect: TL111
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()

import torch
from accelerate import Accelerator


def probe(features, labels):
    # A linear probe trained in plain PyTorch beside an Accelerate script: no prepared model.
    head = torch.nn.Linear(features.shape[1], 10)
    optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
    for _ in range(100):
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(head(features), labels)
        loss.backward()
        optimizer.step()
    return head


def main(model, loader):
    accelerator = Accelerator()
    model, loader = accelerator.prepare(model, loader)
    return probe(*accelerator.gather_for_metrics(next(iter(loader))))

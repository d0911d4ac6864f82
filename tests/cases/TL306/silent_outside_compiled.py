# The host read happens after the compiled call returns, in an uncompiled function, or
# behind `torch.compiler.is_compiling()`; `.cpu()` is traced and does not break the graph.
import torch
import torch.nn.functional as F


@torch.compile
def forward_loss(model, x, y):
    loss = F.cross_entropy(model(x), y)
    if not torch.compiler.is_compiling():
        print(loss.item())
    return loss, loss.detach().cpu()


def train(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        loss, _ = forward_loss(model, x, y)
        loss.backward()
        optimizer.step()
        if optimizer.state:
            last = loss.item()
    return last


@torch.compiler.disable
def log_loss(loss):
    print(loss.item())


@torch.compile
def step(model, x):
    loss = model(x).mean()
    log_loss(loss)
    return loss


def evaluate(model, x):
    return model(x).mean().item()

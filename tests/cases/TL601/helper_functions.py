import torch
import torch.distributed as dist


def evaluate(model, loader):
    correct = torch.zeros((), device="cuda")
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x.cuda()).argmax(1) == y.cuda()).sum()
    dist.all_reduce(correct)
    return correct


def log_metrics(model, loader, step):
    return evaluate(model, loader)


def train(model, loader, optimizer, args):
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda()).backward()
        optimizer.step()
        if args.local_rank in (-1, 0) and step % 100 == 0:
            log_metrics(model, loader, step)  # expect: TL601
    if not dist.is_initialized() or dist.get_rank() == 0:
        evaluate(model, loader)  # expect: TL601

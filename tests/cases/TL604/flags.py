# A flag computed from a rank test earlier in the file (`args.save_logs = ... and is_master(args)`)
# guards the save as well as the test itself would; a flag that says nothing about the rank
# does not.
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def is_master(args):
    return args.rank == 0


def main(args, model, loader):
    dist.init_process_group("nccl")
    args.save_logs = args.logs and args.logs.lower() != "none" and is_master(args)
    should_export: bool = dist.get_rank() == 0
    keep_last = args.keep_last and args.epochs > 1
    model = DDP(model.cuda())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        for x, y in loader:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
            optimizer.step()
        if args.save_logs:
            torch.save(model.module.state_dict(), "last.pt")
        if should_export:
            torch.save(model.module.state_dict(), "export.pt")
        if keep_last:
            torch.save(model.module.state_dict(), "keep.pt")  # expect: TL604
        dist.barrier()

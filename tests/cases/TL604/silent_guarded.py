import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main(args, model, loader):
    dist.init_process_group("nccl")
    model = DDP(model.cuda())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        for x, y in loader:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
            optimizer.step()
        if dist.get_rank() == 0:
            torch.save(model.module.state_dict(), "last.pt")
        if args.rank % args.ngpus_per_node == 0:
            torch.save(model.module.state_dict(), "node_last.pt")
        dist.barrier()

import torch
import torch.distributed as dist


def prepare_data(args, dataset):
    # The main process downloads first; the others wait, then read what it wrote.
    if args.local_rank not in (-1, 0):
        dist.barrier()
    dataset.download()
    if args.local_rank == 0:
        dist.barrier()


def reduce_if_distributed(args, t):
    if args.local_rank != -1:  # distributed at all: every rank takes this branch
        dist.all_reduce(t)
    return t


def pipeline_stage(rank, t, group):
    if rank < 4:
        dist.all_reduce(t, group=group)  # a collective of that subgroup only
    if rank == 0:
        dist.send(t, dst=1)  # point to point: meant for one rank
    elif rank == 1:
        dist.recv(t, src=0)

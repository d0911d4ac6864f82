# Near-misses: the barrier pair that lets rank 0 go first, and one barrier every rank reaches.
import torch.distributed as dist


def prepare(rank, path):
    if rank != 0:
        dist.barrier()
    if rank == 0:
        download(path)
        dist.barrier()


def prepare_simple(rank, path):
    if rank == 0:
        download(path)
    dist.barrier()


def download(path):
    pass

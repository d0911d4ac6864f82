# A barrier after the rank-0 block does not pair with the one inside it: rank 0 enters the
# barrier twice, the other ranks once.
import torch.distributed as dist


def prepare(rank, path):
    if rank == 0:
        download(path)
        dist.barrier()  # expect: TL601
    dist.barrier()


def download(path):
    pass

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


def save_shards(model, step):
    # Each rank writes its own shard: the path names the rank.
    rank = dist.get_rank()
    torch.save(model.state_dict(), f"step{step}/shard_{rank}.pt")


def main(model, step):
    dist.init_process_group("nccl")
    model = FSDP(model)
    save_shards(model, step)
    torch.save(model.state_dict(), f"step{step}/rank{dist.get_rank()}.pt")


def single_process(model, path):
    # No process group here: one process, one file.
    torch.save(model.state_dict(), path)

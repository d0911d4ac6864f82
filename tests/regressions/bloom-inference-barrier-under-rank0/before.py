"""Only rank 0 calls a helper chain that ends in dist.barrier(), then every rank calls dist.barrier(): rank 0 waits twice."""
import json
import os
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn

os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29531")
os.environ.setdefault("RANK", "0")
os.environ.setdefault("WORLD_SIZE", "1")
dist.init_process_group("gloo")
rank = dist.get_rank()

model_name = "tiny-demo"
cache_dir = Path("/tmp/bloom_barrier_demo")
checkpoints_json = cache_dir / "checkpoints.json"


def download_shards(name):
    repo = cache_dir / name
    repo.mkdir(parents=True, exist_ok=True)
    for i in range(2):
        torch.save(nn.Linear(8, 8).state_dict(), repo / f"shard{i}.bin")


def get_repo_root(name):
    if rank == 0:
        download_shards(name)
    dist.barrier()
    return cache_dir / name


def get_checkpoint_files(name):
    repo = get_repo_root(name)
    return sorted(str(p) for p in repo.glob("*.bin"))


def write_checkpoints_json():
    with open(checkpoints_json, "w") as f:
        checkpoint_files = get_checkpoint_files(model_name)
        json.dump({"type": "demo", "checkpoints": checkpoint_files}, f)


repo_root = get_repo_root(model_name)
if rank == 0:
    write_checkpoints_json()
dist.barrier()

model = nn.Linear(8, 8)
with open(checkpoints_json) as f:
    files = json.load(f)["checkpoints"]
model.load_state_dict(torch.load(files[0], weights_only=True))
model.eval()
with torch.no_grad():
    print(rank, model(torch.randn(2, 8)).shape)
dist.destroy_process_group()

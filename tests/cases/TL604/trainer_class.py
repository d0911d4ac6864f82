import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


class Trainer:
    def __init__(self, model, loader, args):
        dist.init_process_group("nccl")
        self.model = FSDP(model)
        self.loader = loader
        self.args = args

    def fit(self):
        optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-4)
        for x in self.loader:
            optimizer.zero_grad()
            self.model(x).mean().backward()
            optimizer.step()

    def run(self):
        self.model = FSDP(self.model.module)
        self.fit()
        torch.save(self.model.state_dict(), self.args.output)  # expect: TL604

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("nccl")
rank = int(os.environ["RANK"])
model = DDP(torch.nn.Linear(8, 2).cuda())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        optimizer.step()
    if rank == 0:
        torch.save(model.module.state_dict(), "last.pt")
        dist.barrier()  # expect: TL601
    if dist.get_rank() != 0:
        pass
    else:
        score = torch.zeros(1, device="cuda")
        dist.all_reduce(score)  # expect: TL601

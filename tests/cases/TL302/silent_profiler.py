import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, schedule

model = torch.nn.Linear(512, 512).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [torch.randn(64, 512) for _ in range(20)]

with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=schedule(wait=1, warmup=1, active=3)) as prof:
    for x in loader:
        x = x.cuda()
        optimizer.zero_grad()
        F.mse_loss(model(x), x).backward()
        optimizer.step()
        torch.cuda.synchronize()
        prof.step()

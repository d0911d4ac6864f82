# Gradient accumulation under DDP: the sync flag is set after the micro-batch's forward.
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(torch.nn.Linear(8, 8))
optimizer = torch.optim.AdamW(model.parameters())
grad_accum_steps = 4
for step in range(100):
    for micro_step in range(grad_accum_steps):
        x = torch.randn(4, 8)
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            loss = model(x).pow(2).mean()
        loss = loss / grad_accum_steps
        model.require_backward_grad_sync = micro_step == grad_accum_steps - 1  # expect: TL607
        loss.backward()
    optimizer.step()
    optimizer.zero_grad()

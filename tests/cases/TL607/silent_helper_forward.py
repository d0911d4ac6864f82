# The forward is a helper's, not written in the loop; a switch for another module; the flag
# set after the last backward (for the next iteration).
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(torch.nn.Linear(8, 8))
teacher = DDP(torch.nn.Linear(8, 8))
optimizer = torch.optim.AdamW(model.parameters())


def compute_loss(batch):
    return model(batch).pow(2).mean()


for index, batch in enumerate([torch.randn(4, 8) for _ in range(8)]):
    loss = compute_loss(batch)
    with model.no_sync():
        loss.backward()
    hint = teacher(batch)
    with model.no_sync():
        loss = (model(batch) - hint.detach()).pow(2).mean()
        loss.backward()
    loss = model(batch).pow(2).mean()
    loss.backward()
    model.require_backward_grad_sync = index % 2 == 0
    optimizer.step()
    optimizer.zero_grad()

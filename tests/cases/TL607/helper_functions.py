# `no_sync()` wraps only the backward; the forward ran before it (also through Accelerate).
import torch
from accelerate import Accelerator
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(torch.nn.Linear(8, 8))
optimizer = torch.optim.AdamW(model.parameters())
steps = 4
for batch in [torch.randn(4, 8) for _ in range(16)]:
    for i in range(1, steps + 1):
        loss = model(batch).pow(2).mean()
        if i < steps:
            with model.no_sync():  # expect: TL607
                loss.backward()
        else:
            loss.backward()
    optimizer.step()
    optimizer.zero_grad()


def train(accelerator: Accelerator, net, loader, opt):
    for index, (inputs, targets) in enumerate(loader):
        loss = torch.nn.functional.mse_loss(net(inputs), targets)
        if index % 2 == 0:
            with accelerator.no_sync(net):  # expect: TL607
                accelerator.backward(loss)
        else:
            accelerator.backward(loss)
            opt.step()
            opt.zero_grad()

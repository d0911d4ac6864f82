# The scheduler and the optimizer step under the same accumulation guard: they run at the same
# rate, and the scheduler still goes first. A configuration switch around the optimizer step
# (`if plugin is None:`) is not a rate.
import torch

model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=100)
accumulation_steps = 4
loader = [torch.randn(2, 4) for _ in range(32)]

for i, x in enumerate(loader):
    model(x).sum().backward()
    if (i + 1) % accumulation_steps == 0:
        scheduler.step()  # expect: TL107
        optimizer.step()
        optimizer.zero_grad()


def train(model, loader, optimizer, lr_scheduler, accelerator):
    for batch in loader:
        loss = model(batch).mean()
        accelerator.backward(loss)
        if accelerator.state.deepspeed_plugin is None:
            optimizer.step()
            optimizer.zero_grad()
        lr_scheduler.step()

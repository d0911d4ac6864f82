# The autocast context of a training framework is an autocast like `torch.autocast`:
# `accelerator.autocast()` and `fabric.autocast()` run their block in mixed precision.
import lightning as L
from accelerate import Accelerator


def train_accelerate(model, loader, optimizer):
    accelerator = Accelerator(mixed_precision="fp16")
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for batch in loader:
        optimizer.zero_grad()
        with accelerator.autocast():
            loss = model(batch).mean()
            accelerator.backward(loss)  # expect: TL206
        optimizer.step()


def train_fabric(model, loader, optimizer):
    fabric = L.Fabric(precision="16-mixed")
    model, optimizer = fabric.setup(model, optimizer)
    for batch in loader:
        optimizer.zero_grad()
        with fabric.autocast():
            loss = model(batch).mean()
            fabric.backward(loss)  # expect: TL206
        optimizer.step()

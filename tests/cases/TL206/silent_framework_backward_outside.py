# The framework's autocast closes before backward; `accumulate` and an unknown object's
# `autocast()` method are not autocast regions.
import lightning as L
from accelerate import Accelerator


def train_accelerate(model, loader, optimizer):
    accelerator = Accelerator(mixed_precision="fp16", gradient_accumulation_steps=4)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for batch in loader:
        with accelerator.accumulate(model):
            with accelerator.autocast():
                loss = model(batch).mean()
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()


def train_fabric(model, loader, optimizer, settings):
    fabric = L.Fabric(precision="bf16-mixed")
    model, optimizer = fabric.setup(model, optimizer)
    for batch in loader:
        optimizer.zero_grad()
        with fabric.autocast():
            loss = model(batch).mean()
        with settings.autocast():
            fabric.backward(loss)
        optimizer.step()

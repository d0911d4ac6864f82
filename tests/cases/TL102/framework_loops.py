# Frameworks do not clear gradients for you outside a DeepSpeed engine's step: an Accelerate
# or Fabric loop that never calls `zero_grad()` sums the gradients of every iteration, even
# when the framework clips them (`fabric.clip_gradients(model, optimizer, ...)` only clips)
# or accumulates them (`accelerator.accumulate` only delays the clear you write).
import lightning as L
from accelerate import Accelerator


def train_fabric(model, loader, optimizer):
    fabric = L.Fabric()
    model, optimizer = fabric.setup(model, optimizer)
    for batch in loader:
        loss = model(batch).mean()
        fabric.backward(loss)  # expect: TL102
        fabric.clip_gradients(model, optimizer, max_norm=1.0)
        optimizer.step()


def train_accelerate(model, loader, optimizer):
    accelerator = Accelerator(gradient_accumulation_steps=4)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for batch in loader:
        with accelerator.accumulate(model):
            loss = model(batch).mean()
            accelerator.backward(loss)  # expect: TL102
            if accelerator.sync_gradients:
                accelerator.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()

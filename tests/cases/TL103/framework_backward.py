# Through Accelerate's and Fabric's own backward: clearing between backward and step still
# throws the gradients away.
import lightning as L
from accelerate import Accelerator


def train_accelerate(model, loader, optimizer):
    accelerator = Accelerator()
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for batch in loader:
        loss = model(batch).mean()
        accelerator.backward(loss)
        optimizer.zero_grad()  # expect: TL103
        optimizer.step()


def train_fabric(model, loader, optimizer):
    fabric = L.Fabric()
    model, optimizer = fabric.setup(model, optimizer)
    for batch in loader:
        loss = model(batch).mean()
        fabric.backward(loss)
        fabric.clip_gradients(model, optimizer, max_norm=1.0)
        optimizer.zero_grad()  # expect: TL103
        optimizer.step()

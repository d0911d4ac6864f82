# An Accelerator does not accumulate unless the step runs inside `accelerator.accumulate`:
# a hand-written accumulation guard with a clear on every micro-batch still keeps only the
# last micro-batch.
from accelerate import Accelerator


def train(model, loader, optimizer, accumulation_steps):
    accelerator = Accelerator()
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for i, batch in enumerate(loader):
        optimizer.zero_grad()  # expect: TL111
        loss = model(batch).mean()
        accelerator.backward(loss)
        if (i + 1) % accumulation_steps == 0:
            optimizer.step()

# Inside `with accelerator.accumulate(model):` the prepared optimizer's `zero_grad()` and
# `step()` do nothing until the accumulation window closes, so clearing on every
# micro-batch is how Accelerate's own examples are written. A DeepSpeed engine accumulates
# inside its own `step()`.
import deepspeed
from accelerate import Accelerator


def train(model, loader, optimizer, accumulation_steps):
    accelerator = Accelerator(gradient_accumulation_steps=accumulation_steps)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for i, batch in enumerate(loader):
        with accelerator.accumulate(model):
            optimizer.zero_grad()
            loss = model(batch).mean()
            accelerator.backward(loss)
            if (i + 1) % accumulation_steps == 0:
                optimizer.step()


def train_deepspeed(args, model, loader, accumulation_steps):
    engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model)
    for i, batch in enumerate(loader):
        engine.zero_grad()
        loss = engine(batch).mean()
        engine.backward(loss)
        engine.step()

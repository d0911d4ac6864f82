# Setting a framework up with the optimizer (`accelerator.prepare(model, optimizer)`) or
# clipping through it does not step it; a DeepSpeed engine steps with `engine.step()`.
import deepspeed
from accelerate import Accelerator


def train_accelerate(model, loader, optimizer):
    accelerator = Accelerator()
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for batch in loader:
        optimizer.zero_grad()
        loss = model(batch).mean()
        accelerator.backward(loss)  # expect: TL101
        accelerator.clip_grad_norm_(model.parameters(), 1.0)


def train_deepspeed(args, model, loader):
    model_engine, _, _, _ = deepspeed.initialize(args=args, model=model)
    for batch in loader:
        loss = model_engine(batch).mean()
        model_engine.backward(loss)  # expect: TL101

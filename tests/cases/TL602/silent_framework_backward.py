import torch
from accelerate import Accelerator


def train(model, optimizer, loader):
    accelerator = Accelerator(mixed_precision="fp16")
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for x, y in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        accelerator.backward(loss)
        optimizer.step()


def train_either(args, engine, model, optimizer, loader):
    for x in loader:
        optimizer.zero_grad()
        loss = model(x).mean()
        if args.deepspeed:
            engine.backward(loss)
            engine.step()
        else:
            loss.backward()  # the plain PyTorch path of the same script
            optimizer.step()

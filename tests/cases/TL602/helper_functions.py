import deepspeed
import torch
from lightning.fabric import Fabric


def train_deepspeed(args, model, loader):
    engine, optimizer, _, _ = deepspeed.initialize(
        args=args, model=model, model_parameters=model.parameters()
    )
    for x in loader:
        loss = engine(x.to(engine.device)).mean()
        loss.backward()  # expect: TL602
        engine.step()


def train_fabric(model, optimizer, loader):
    fabric = Fabric(accelerator="cuda", precision="16-mixed")
    fabric.launch()
    model, optimizer = fabric.setup(model, optimizer)
    loader = fabric.setup_dataloaders(loader)
    for x, y in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()  # expect: TL602
        optimizer.step()

import torch
import torch_xla.core.xla_model as xm


def train(model, loader, optimizer, accelerator):
    for batch in loader:
        loss = model(batch).mean()
        accelerator.backward(loss)
        xm.optimizer_step(optimizer)


def train_ds(model_engine, loader):
    for batch in loader:
        loss = model_engine(batch)
        model_engine.backward(loss)
        model_engine.step()

import torch


def train_step(model, optimizer, batch):
    compiled = torch.compile(model)
    loss = compiled(batch).mean()
    loss.backward()
    optimizer.step()


def train(model, optimizer, loader):
    for batch in loader:
        step_model = torch.compile(model, mode="reduce-overhead")  # expect: TL113
        loss = step_model(batch).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

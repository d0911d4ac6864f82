import torch

model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)


def train_step(batch, micro_batches=4):
    optimizer.zero_grad()
    for chunk in batch.chunk(micro_batches):
        loss = model(chunk).sum() / micro_batches
        loss.backward()
    optimizer.step()


def fit(loader):
    for batch in loader:
        for micro in batch.split(2):
            model(micro).mean().backward()
        optimizer.step()
        optimizer.zero_grad()

# The loss divided by the window in each of the ways people write it, or the gradients
# divided before the step.
import torch
from torch import nn

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()
loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(16)]
accum = 4


def divided_on_assignment():
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y) / accum
        loss.backward()
        if (i + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad()


def divided_in_place():
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        loss /= accum
        loss.backward()
        if (i + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad()


def divided_at_the_backward():
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        (loss / accum).backward()
        if (i + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad()


def gradients_divided():
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        loss.backward()
        if (i + 1) % accum == 0:
            for p in model.parameters():
                p.grad /= accum
            optimizer.step()
            optimizer.zero_grad()

# Storing into the model (freezing a submodule's parameter) after `model.train()` does not
# rebind it: the training function still puts the model back in train mode.
import torch

model = torch.nn.Linear(4, 4)
optimizer = torch.optim.Adam(model.parameters())
loader = [torch.randn(2, 4)] * 3


def train():
    model.train()
    model.weight.requires_grad = True
    for x in loader:
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()


@torch.no_grad()
def test():
    model.eval()
    for x in loader:
        model(x)


for epoch in range(3):
    train()
    test()

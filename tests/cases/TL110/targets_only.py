# A loss made only of values that cannot carry a graph: outputs computed under no_grad, the
# loader's targets, numbers.
import torch
import torch.nn.functional as F

model = torch.nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
train_loader = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(4)]
weight = 0.5

for x, y in train_loader:
    with torch.no_grad():
        out = model(x)
    loss = F.mse_loss(out, y) * weight + 1.0
    optimizer.zero_grad()
    loss.backward()  # expect: TL110
    optimizer.step()

import torch
from torch import nn

model = nn.Linear(16, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 16), torch.randn(8, 1)) for _ in range(20)]

losses, tensors = [], []
total, total_f, total_t = 0.0, 0.0, torch.zeros(())
for x, y in loader:
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    total += loss.item()
    total_f += float(loss)
    total_t += loss.detach()
    total_t += loss.data
    losses.append(loss.item())
    tensors.append(loss.detach().cpu())
    loss = loss.item()
    losses.append(loss)
print(total / len(loader), total_f, total_t.item(), sum(losses))

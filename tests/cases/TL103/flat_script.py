import torch

model = torch.nn.Linear(10, 1)
optimizer = torch.optim.Adam(model.parameters())
data = [(torch.randn(4, 10), torch.randn(4, 1))] * 10

for x, y in data:
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.zero_grad()  # expect: TL103
    optimizer.step()

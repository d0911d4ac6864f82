import torch

model = torch.nn.Linear(10, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(4, 10), torch.randn(4, 1))] * 8

for x, y in loader:
    optimizer.zero_grad()
    optimizer.step()  # expect: TL104
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()

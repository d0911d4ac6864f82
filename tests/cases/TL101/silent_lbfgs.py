import torch

model = torch.nn.Linear(3, 1)
optimizer = torch.optim.LBFGS(model.parameters())
x, y = torch.randn(8, 3), torch.randn(8, 1)

for _ in range(5):
    def closure():
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        return loss

    optimizer.step(closure)

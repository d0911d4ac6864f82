import torch

model = torch.nn.Linear(3, 1)
optimizer = torch.optim.LBFGS(model.parameters(), lr=1)
data = [(torch.randn(8, 3), torch.randn(8, 1))]


def closure_for(x, y):
    def closure():
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        return loss

    return closure


for x, y in data:
    def closure():
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        return loss

    optimizer.step(closure)

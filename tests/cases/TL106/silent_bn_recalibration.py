import torch

model = torch.nn.Sequential(torch.nn.Linear(10, 32), torch.nn.BatchNorm1d(32), torch.nn.ReLU())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(4, 10), torch.randint(0, 2, (4,)))]

for epoch in range(3):
    model.eval()
    with torch.no_grad():
        baseline = sum(model(x).sum() for x, _ in loader)
    # Re-estimate BatchNorm running statistics after averaging weights: train mode, no backward.
    model.train()
    for x, _ in loader:
        model(x)

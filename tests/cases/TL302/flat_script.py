import torch
from torch import nn

device = torch.device("cuda")
model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 1000)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(256, 1024), torch.randint(0, 1000, (256,))) for _ in range(500)]

for epoch in range(10):
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        torch.cuda.synchronize()  # expect: TL302
        torch.cuda.empty_cache()  # expect: TL302
    torch.cuda.empty_cache()

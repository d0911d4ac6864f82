import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda")
dataset = TensorDataset(torch.randn(10_000, 3, 64, 64), torch.randint(0, 100, (10_000,)))
loader = DataLoader(dataset, batch_size=256, shuffle=True, num_workers=8, pin_memory=True)
model = nn.Sequential(nn.Conv2d(3, 64, 3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(100)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for epoch in range(90):
    for images, labels in loader:
        images = images.to(device)  # expect: TL304
        labels = labels.cuda()  # expect: TL304
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(images), labels).backward()
        optimizer.step()

import torch
from torch import nn

model = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.LazyLinear(10))
model = model.cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
loader = [(torch.randn(32, 3, 32, 32), torch.randint(0, 10, (32,))) for _ in range(100)]

for epoch in range(30):
    for images, labels in loader:
        images, labels = images.cuda(), labels.cuda()
        optimizer.zero_grad()
        with torch.autocast(device_type="cuda"):
            outputs = model(images)
            loss = nn.functional.cross_entropy(outputs, labels)
        loss.backward()  # expect: TL205
        optimizer.step()

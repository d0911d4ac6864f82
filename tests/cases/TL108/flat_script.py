import torch
from torch import nn

model = nn.Sequential(nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loader = [(torch.randn(32, 128), torch.randint(0, 10, (32,))) for _ in range(100)]

history = []
for epoch in range(10):
    running_loss = 0.0
    seen = 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        running_loss += loss * x.size(0)  # expect: TL108
        seen += x.size(0)
        history.append(loss)  # expect: TL108
    print(f"epoch {epoch}: {running_loss / seen:.4f}")

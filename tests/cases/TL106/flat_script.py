import torch
from torch import nn

model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, 5))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
train_loader = [(torch.randn(32, 20), torch.randint(0, 5, (32,))) for _ in range(10)]
val_loader = [(torch.randn(32, 20), torch.randint(0, 5, (32,))) for _ in range(3)]

for epoch in range(5):
    model.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()

    model.eval()
    correct = 0
    for x, y in val_loader:
        logits = model(x)  # expect: TL106
        correct += (logits.argmax(1) == y).sum().item()
    print(f"epoch {epoch}: val acc {correct / 96:.3f}")

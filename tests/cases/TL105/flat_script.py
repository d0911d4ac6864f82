import torch

model = torch.nn.Linear(10, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
train_loader = [(torch.randn(4, 10), torch.randint(0, 2, (4,)))] * 8
val_loader = train_loader[:2]

model.train()
for epoch in range(5):
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    model.eval()  # expect: TL105
    with torch.no_grad():
        correct = sum((model(x).argmax(1) == y).sum().item() for x, y in val_loader)

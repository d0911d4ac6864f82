import torch

model = torch.nn.Linear(10, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
log_every = 50

for epoch in range(3):
    total = torch.zeros(())
    for i, (x, y) in enumerate([]):
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.detach()
        if i % log_every == 0:
            print(f"{i}: {loss.item():.4f}")
        if (i + 1) % 10 != 0:
            continue
        print(loss.item())
    print("epoch", epoch, total.item())

import torch

model = torch.nn.Linear(10, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
all_labels = []

for x, labels in []:
    optimizer.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), labels)
    loss.backward()
    optimizer.step()
    all_labels.extend(labels.tolist())
    n = int(labels.shape[0])
    lr = optimizer.param_groups[0]["lr"]
    print(f"lr={lr} n={n}")

positives = 0
for x, y in []:
    positives += y.sum().item()
    first = batch_size = y[0].item()
    x, y = x.cuda(), y.cuda()
    optimizer.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()

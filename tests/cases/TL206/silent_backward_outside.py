import torch
import torch.nn.functional as F

model = torch.nn.Linear(128, 10).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cuda")

for x, y in []:
    optimizer.zero_grad()
    with torch.autocast("cuda", dtype=torch.float16):
        loss = F.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()


def compute_loss(model, x, y):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        return F.cross_entropy(model(x), y)


def train(model, loader, optimizer):
    for x, y in loader:
        loss = compute_loss(model, x, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

import torch
import torch.nn.functional as F

model = torch.nn.Linear(64, 8).cuda()
optimizer = torch.optim.Adam(model.parameters())
scaler = torch.amp.GradScaler("cuda")

for x, y in []:
    optimizer.zero_grad()
    with torch.autocast("cuda", dtype=torch.float16):
        loss = F.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()

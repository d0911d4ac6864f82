import torch
from torch.amp import GradScaler, autocast

model = torch.nn.Linear(10, 1).cuda()
optimizer = torch.optim.AdamW(model.parameters())
scaler = GradScaler("cuda")

for x, y in [(torch.randn(4, 10), torch.randn(4, 1))] * 8:
    optimizer.zero_grad()
    with autocast("cuda"):
        loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
    loss.backward()  # expect: TL201
    scaler.step(optimizer)
    scaler.update()

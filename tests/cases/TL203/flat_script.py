import torch
from torch import nn

device = torch.device("cuda")
model = nn.Sequential(nn.Linear(512, 512), nn.GELU(), nn.Linear(512, 10)).to(device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
scaler = torch.amp.GradScaler("cuda")
loader = [(torch.randn(64, 512), torch.randint(0, 10, (64,))) for _ in range(100)]

for epoch in range(10):
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y)
        scaler.scale(loss).backward()
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)  # expect: TL203
        scaler.step(optimizer)
        scaler.update()

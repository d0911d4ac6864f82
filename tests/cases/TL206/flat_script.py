import torch
from torch import nn

model = nn.TransformerEncoder(nn.TransformerEncoderLayer(256, 8, batch_first=True), 4).cuda()
head = nn.Linear(256, 2).cuda()
params = list(model.parameters()) + list(head.parameters())
optimizer = torch.optim.AdamW(params, lr=1e-4)
loader = [(torch.randn(16, 128, 256), torch.randint(0, 2, (16,))) for _ in range(100)]

for epoch in range(3):
    for x, y in loader:
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = head(model(x).mean(dim=1))
            loss = nn.functional.cross_entropy(logits, y)
            loss.backward()  # expect: TL206
        optimizer.step()

import torch
import torch.nn.functional as F

device = torch.device("cuda")
model = torch.nn.Linear(100, 1).to(device)
optimizer = torch.optim.Adam(model.parameters())

for x in []:
    x = x.to(device, non_blocking=True)
    noise = torch.randn(x.size(0), 100, device=device)
    labels = torch.full((x.size(0), 1), 0.9, device=x.device)
    positions = torch.arange(x.size(1), device=device)
    mask = torch.ones_like(x)
    loss = F.binary_cross_entropy_with_logits(model(noise + x), labels) + mask.sum() * 0 + positions.sum() * 0
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

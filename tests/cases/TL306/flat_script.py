import torch
import torch.nn.functional as F

model = torch.nn.Linear(16, 4).cuda()
optimizer = torch.optim.AdamW(model.parameters())


@torch.compile
def train_step(x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    print(f"loss {loss.item():.3f}")  # expect: TL306
    return loss


for x, y in loader:
    optimizer.zero_grad()
    train_step(x.cuda(), y.cuda())
    optimizer.step()

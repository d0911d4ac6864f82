import torch

net = torch.nn.Linear(8, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
data = [torch.randn(4, 8)] * 4

for x in data:
    with torch.autocast("cuda"):
        loss = net(x).sum()
    loss.backward()
    opt.step()
    opt.zero_grad()

scaler = torch.amp.GradScaler("cuda")
for x in data:
    with torch.autocast("cuda"):
        loss = net(x).sum()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    opt.zero_grad()

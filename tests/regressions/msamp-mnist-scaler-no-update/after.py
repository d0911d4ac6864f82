"""An AMP MNIST loop that scales and steps through the GradScaler but never updates it."""
import torch
import torch.nn.functional as F
from torch import nn

device = torch.device("cuda")
model = nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10)).to(device)
optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
scaler = torch.amp.GradScaler("cuda")
train_loader = [(torch.rand(64, 1, 28, 28), torch.randint(0, 10, (64,))) for _ in range(100)]


def train(epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        with torch.autocast("cuda"):
            output = model(data)
        loss = F.cross_entropy(output.float(), target)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        if batch_idx % 10 == 0:
            print(epoch, batch_idx, loss.item())


for epoch in range(1, 15):
    train(epoch)

"""An epoch loop that steps the LR schedule before the train() call that steps the optimizer."""
import torch
from torch import nn


def train(model, loader, optimizer):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()


model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 5))
warm_optimizer = torch.optim.Adam(model[2].parameters(), lr=1e-3)
joint_optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
joint_scheduler = torch.optim.lr_scheduler.StepLR(joint_optimizer, step_size=5, gamma=0.1)
loader = [(torch.randn(16, 20), torch.randint(0, 5, (16,))) for _ in range(10)]
num_warm_epochs = 3

for epoch in range(30):
    if epoch < num_warm_epochs:
        train(model, loader, warm_optimizer)
    else:
        joint_scheduler.step()
        train(model, loader, joint_optimizer)

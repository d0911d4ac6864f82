import copy

import torch
from torch import nn


class Backbone(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 16, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(16, classes)

    def forward(self, x):
        return self.fc(self.features(x).flatten(1))


model = Backbone()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
model.fc = nn.Linear(16, 10)  # expect: TL123
criterion = nn.CrossEntropyLoss()
loader = [(torch.randn(4, 3, 32, 32), torch.randint(0, 10, (4,))) for _ in range(8)]
for x, y in loader:
    optimizer.zero_grad()
    criterion(model(x), y).backward()
    optimizer.step()

student = Backbone(10)
groups = [{"params": student.features.parameters(), "lr": 1e-4}, {"params": student.fc.parameters()}]
student_opt = torch.optim.AdamW(groups, lr=1e-3)
student = copy.deepcopy(model)  # expect: TL123
for x, y in loader:
    student_opt.zero_grad()
    criterion(student(x), y).backward()
    student_opt.step()

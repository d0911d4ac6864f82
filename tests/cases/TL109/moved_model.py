import torch
import torch.nn.functional as F
from torch import nn


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        return F.softmax(self.fc(x), dim=1)


device = "cuda" if torch.cuda.is_available() else "cpu"
model = Classifier().to(device)
ema = Classifier().cuda().train()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()
loader = [(torch.randn(16, 32), torch.randint(0, 10, (16,))) for _ in range(10)]

for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x.to(device)), y.to(device))  # expect: TL109
    loss = loss + F.cross_entropy(ema(x), y)  # expect: TL109
    loss.backward()
    optimizer.step()

import torch
import torch.nn.functional as F
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(32, 4)

    def forward(self, x):
        return self.fc(x)

    def predict_proba(self, x):
        return F.softmax(self.forward(x), dim=-1)


def train(loader):
    model = Net()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        logits = model(x)
        probs = logits.softmax(dim=1)
        confidence = probs.max(dim=1).values.mean()
        loss = criterion(logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(confidence.item())

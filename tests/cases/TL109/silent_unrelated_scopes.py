import torch
import torch.nn.functional as F


class ProbNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 3)

    def forward(self, x):
        return F.softmax(self.fc(x), dim=1)


def export(path):
    model = ProbNet()
    torch.save(model.state_dict(), path)


def train(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()

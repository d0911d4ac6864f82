import torch
import torch.nn.functional as F


class Classifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 3)

    def forward(self, x):
        logits = self.fc(x)
        if self.training:
            return logits
        return F.softmax(logits, dim=-1)


model = Classifier()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in []:
    optimizer.zero_grad()
    F.cross_entropy(model(x), y).backward()
    optimizer.step()

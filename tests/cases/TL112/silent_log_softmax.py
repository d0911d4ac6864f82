import torch
import torch.nn.functional as F
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(784, 10)
        self.log_softmax = nn.LogSoftmax(dim=1)

    def forward(self, x):
        return self.log_softmax(self.fc(x.flatten(1)))


class Logits(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(784, 10)

    def forward(self, x):
        return self.fc(x.flatten(1))


model = Net()
raw = Logits()
optimizer = torch.optim.SGD(list(model.parameters()) + list(raw.parameters()), lr=0.01)
for data, target in [(torch.randn(8, 784), torch.randint(0, 10, (8,)))] * 3:
    optimizer.zero_grad()
    loss = F.nll_loss(model(data), target)
    aux = F.nll_loss(F.log_softmax(raw(data), dim=1), target)
    logits = raw(data)
    log_probs = logits - torch.logsumexp(logits, dim=1, keepdim=True)
    manual = F.nll_loss(log_probs, target)
    scores = F.cross_entropy(raw(data), target)
    (loss + aux + manual + scores).backward()
    optimizer.step()

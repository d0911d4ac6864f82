"""One run_epoch() serves training and validation; the backward and the step live in a callable
loss object built with or without an optimizer. Validation puts the model in eval mode and
passes a loss object without one, with autograd still on."""
import torch
from torch import nn


class LossCompute:
    def __init__(self, criterion, opt=None):
        self.criterion = criterion
        self.opt = opt

    def __call__(self, out, y):
        loss = self.criterion(out, y)
        if self.opt is not None:
            loss.backward()
            self.opt.step()
            self.opt.zero_grad()
        return loss.item()


def run_epoch(batches, model, loss_compute):
    total = 0.0
    for x, y in batches:
        total += loss_compute(model(x), y)
    return total / len(batches)


model = nn.Sequential(nn.Linear(64, 64), nn.Dropout(0.2), nn.Linear(64, 10))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()
train_data = [(torch.randn(32, 64), torch.randint(0, 10, (32,))) for _ in range(20)]
valid_data = train_data[:4]

for epoch in range(30):
    model.train()
    train_loss = run_epoch(train_data, model, LossCompute(criterion, optimizer))
    model.eval()
    with torch.no_grad():
        valid_loss = run_epoch(valid_data, model, LossCompute(criterion, opt=None))
    print(epoch, train_loss, valid_loss)

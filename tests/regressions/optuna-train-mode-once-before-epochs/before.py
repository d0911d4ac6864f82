import torch
import torch.nn.functional as F
from torch import nn


def objective(trial, train_loader, valid_loader, epochs=10):
    p = trial.suggest_float("dropout", 0.2, 0.5)
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Dropout(p), nn.Linear(128, 10))
    optimizer = torch.optim.Adam(model.parameters(), lr=trial.suggest_float("lr", 1e-5, 1e-1, log=True))

    model.train()
    for epoch in range(epochs):
        for data, target in train_loader:
            optimizer.zero_grad()
            loss = F.nll_loss(F.log_softmax(model(data), dim=1), target)
            loss.backward()
            optimizer.step()

        model.eval()
        correct = 0
        with torch.no_grad():
            for data, target in valid_loader:
                pred = model(data).argmax(dim=1)
                correct += pred.eq(target).sum().item()
        trial.report(correct / len(valid_loader.dataset), epoch)
    return correct / len(valid_loader.dataset)

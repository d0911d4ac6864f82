"""A similarity model trained over several loaders: the loss is summed for the log only."""

import torch


def train(model, criterion, trainingloaders, num_epochs, lr=1e-3):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    for epoch in range(num_epochs):
        cumulative_loss = 0.0
        for trainingloader in trainingloaders:
            for i, (samples, targets) in enumerate(trainingloader):
                optimizer.zero_grad()
                outputs = model(samples)
                loss = criterion(outputs, targets)
                cumulative_loss += loss.mean().item()
                loss.mean().backward()
                optimizer.step()
        print(epoch, cumulative_loss)

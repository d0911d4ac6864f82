"""fit() adds each batch's loss tensor (with its graph) to a running total for the epoch."""
import torch
from torch import nn


class LabelModel(nn.Module):
    def __init__(self, num_sources, num_classes):
        super().__init__()
        self.accuracy = nn.Parameter(torch.zeros(num_sources, num_classes))

    def forward(self, votes):
        return -(votes.float() @ self.accuracy).logsumexp(dim=1).mean()

    def fit(self, batches, epochs=10, lr=0.01):
        optimizer = torch.optim.SGD(self.parameters(), lr=lr)
        for epoch in range(epochs):
            running_loss = 0.0
            for votes in batches:
                optimizer.zero_grad()
                loss = self(votes)
                loss.backward()
                optimizer.step()
                running_loss += loss.item()
            print("epoch", epoch, float(running_loss) / len(batches))


if __name__ == "__main__":
    LabelModel(5, 3).fit([torch.randint(0, 2, (64, 5)) for _ in range(10)])

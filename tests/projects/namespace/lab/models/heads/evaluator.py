from torch import nn


class Evaluator(nn.Module):
    def __init__(self, n_input, n_classes, n_hidden=None):
        super().__init__()
        if n_hidden is None:
            self.block = nn.Sequential(nn.Linear(n_input, n_classes), nn.Softmax(dim=1))
        else:
            self.block = nn.Sequential(
                nn.Linear(n_input, n_hidden),
                nn.ReLU(),
                nn.Linear(n_hidden, n_classes),
                nn.Softmax(dim=1),
            )

    def forward(self, x):
        return self.block(x)

"""Full-batch curve fitting with L-BFGS: the optimizer calls a closure that recomputes the loss.

Fits a small tanh network to a noisy damped sine wave. L-BFGS re-evaluates the closure several
times per `optimizer.step(closure)`, so the closure clears the gradients itself. Clean script.
"""

import math

import torch
import torch.nn as nn

N_POINTS = 256
MAX_STEPS = 15
LOG_EVERY = 5


def make_curve(n, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.linspace(-3.0, 3.0, n).unsqueeze(1)
    y = torch.exp(-0.3 * x.abs()) * torch.sin(2.0 * math.pi * 0.5 * x)
    return x, y + 0.05 * torch.randn(n, 1, generator=g)


class CurveNet(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(1, hidden), nn.Tanh(),
            nn.Linear(hidden, hidden), nn.Tanh(),
            nn.Linear(hidden, 1),
        )

    def forward(self, x):
        return self.layers(x)


def main():
    torch.manual_seed(0)
    x, y = make_curve(N_POINTS)
    x_val, y_val = make_curve(64, seed=1)

    model = CurveNet()
    criterion = nn.MSELoss()
    optimizer = torch.optim.LBFGS(model.parameters(), lr=1.0, max_iter=20,
                                  history_size=10, line_search_fn="strong_wolfe")

    def closure():
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        return loss

    model.train()
    for step in range(MAX_STEPS):
        loss = optimizer.step(closure)
        if step % LOG_EVERY == 0:
            with torch.no_grad():
                val_loss = criterion(model(x_val), y_val)
            print(f"step {step:2d}  train mse {loss.item():.5f}  val mse {val_loss.item():.5f}")

    print(f"final loss {closure().item():.5f}")


if __name__ == "__main__":
    main()

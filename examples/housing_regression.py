"""House-price regression with a small MLP on synthetic tabular data.

Eight standardised features (rooms, area, age, ...) and a price that depends on them
non-linearly plus noise; the features are standardised with the training statistics.
"""

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

N_FEATURES = 8
EPOCHS = 20
BATCH_SIZE = 32
LR = 1e-3


def make_housing_data(n, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, N_FEATURES, generator=g) * 2.0 + 5.0
    weights = torch.linspace(-1.0, 1.5, N_FEATURES)
    price = x @ weights + 0.3 * x[:, 0] * x[:, 1] - 0.2 * x[:, 2] ** 2
    price = price + 0.5 * torch.randn(n, generator=g)
    return x, price.unsqueeze(1)


class Regressor(nn.Module):
    def __init__(self, in_features, hidden=64):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(in_features, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, 1),
        )

    def forward(self, x):
        return self.net(x)


def main():
    torch.manual_seed(0)
    x, y = make_housing_data(1200)
    x_train, y_train, x_val, y_val = x[:1000], y[:1000], x[1000:], y[1000:]
    mean, std = x_train.mean(0), x_train.std(0)
    y_mean, y_std = y_train.mean(), y_train.std()
    x_train, x_val = (x_train - mean) / std, (x_val - mean) / std
    y_train, y_val = (y_train - y_mean) / y_std, (y_val - y_mean) / y_std

    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=BATCH_SIZE, shuffle=True)
    model = Regressor(N_FEATURES)
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    loss_fn = nn.MSELoss()

    history = []
    for epoch in range(EPOCHS):
        model.train()
        epoch_loss = 0
        for xb, yb in loader:
            pred = model(xb)
            loss = loss_fn(pred, yb)
            loss.backward()
            optimizer.step()
            epoch_loss += loss
        history.append(epoch_loss / len(loader))

        model.eval()
        with torch.no_grad():
            val_loss = loss_fn(model(x_val), y_val).item()
        if epoch % 5 == 4:
            print(f"epoch {epoch + 1:3d}  train mse {history[-1]:.4f}  val mse {val_loss:.4f}")

    with torch.no_grad():
        rmse = (model(x_val) - y_val).pow(2).mean().sqrt() * y_std
    print(f"validation RMSE in price units: {rmse:.3f}")
    print(f"final loss {history[-1]:.4f}")


if __name__ == "__main__":
    main()

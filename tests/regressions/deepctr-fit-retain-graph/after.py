"""A CTR model's fit loop: one loss per batch (prediction loss, regularisation and an auxiliary
loss), backpropagated once, with the graph retained anyway.
Fixed: a plain backward."""
import torch
from tqdm import tqdm


class BaseModel(torch.nn.Module):
    def fit(self, train_loader, epochs, loss_func, optim, device):
        model = self.train()
        for epoch in range(epochs):
            loss_epoch = 0
            with tqdm(enumerate(train_loader)) as t:
                for index, (x_train, y_train) in t:
                    x = x_train.to(device).float()
                    y = y_train.to(device).float()
                    y_pred = model(x).squeeze()
                    optim.zero_grad()
                    loss = loss_func(y_pred, y.squeeze(), reduction="sum")
                    total_loss = loss + self.get_regularization_loss() + self.aux_loss
                    loss_epoch += loss.item()
                    total_loss.backward()
                    optim.step()

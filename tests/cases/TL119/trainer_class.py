# A recommender's fit loop behind a progress bar context.
import torch
from tqdm import tqdm


class BaseModel(torch.nn.Module):
    def fit(self, train_loader, epochs, loss_func):
        optim = torch.optim.Adam(self.parameters())
        for epoch in range(epochs):
            with tqdm(enumerate(train_loader)) as t:
                for index, (x, y) in t:
                    optim.zero_grad()
                    total_loss = loss_func(self(x).squeeze(), y, reduction="sum")
                    total_loss.backward(retain_graph=True)  # expect: TL119
                    optim.step()

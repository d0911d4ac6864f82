# Modules are converted in place: `model.to(device)` and `model.half()` as statements are right.
import torch
from torch import nn

model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
device = torch.device("cpu")
model.to(device)
model.half()
model.float()
criterion = nn.CrossEntropyLoss()
criterion.cuda() if torch.cuda.is_available() else None


class Wrapper(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(2, 2)

    def prepare(self, device):
        self.net.to(device)
        self.to(device)

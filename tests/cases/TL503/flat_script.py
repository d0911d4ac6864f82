import torch
from torch import nn

model = nn.Linear(4, 2)
state = torch.load("model.pt")  # expect: TL503
model.load_state_dict(torch.load("model.pt", map_location="cpu"))  # expect: TL503
legacy = torch.serialization.load("old.pt")  # expect: TL503
safe = torch.load("model.pt", weights_only=True)
trusted = torch.load("trainer.pt", weights_only=False)

import torch

options = {"map_location": "cpu", "weights_only": True}
weights = torch.load("encoder.pt", weights_only=True)
trainer_state = torch.load("trainer.pt", map_location="cpu", weights_only=False)
head = torch.load("head.pt", **options)

if torch.__version__ >= "1.13":
    backbone = torch.load("backbone.pt", weights_only=True)
else:
    backbone = torch.load("backbone.pt")

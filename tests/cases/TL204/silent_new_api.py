import torch
from torch.amp import GradScaler, autocast

scaler = GradScaler("cuda")
with autocast("cuda", dtype=torch.bfloat16):
    pass
with torch.autocast(device_type="cuda"):
    pass
scaler2 = torch.amp.GradScaler("cuda")

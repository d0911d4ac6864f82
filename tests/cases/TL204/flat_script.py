import torch

model = torch.nn.Linear(10, 1)
scaler = torch.cuda.amp.GradScaler()  # expect: TL204
with torch.cuda.amp.autocast(dtype=torch.float16):  # expect: TL204
    out = model(torch.randn(2, 10))

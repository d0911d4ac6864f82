import torch
from accelerate import Accelerator

accelerator = Accelerator(mixed_precision="fp16", gradient_accumulation_steps=4)
model = torch.nn.Linear(16, 4)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
for x, y in loader:
    with accelerator.accumulate(model):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()  # expect: TL602
        optimizer.step()
        optimizer.zero_grad()

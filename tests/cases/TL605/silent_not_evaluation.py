import torch
from accelerate import Accelerator

accelerator = Accelerator()
model = torch.nn.Linear(16, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
train_loader = torch.utils.data.DataLoader(torch.randn(64, 16), batch_size=8)
eval_loader = torch.utils.data.DataLoader(torch.randn(64, 16), batch_size=8)
model, optimizer, train_loader = accelerator.prepare(model, optimizer, train_loader)

for x in train_loader:
    loss = model(x).pow(2).mean()
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
    step_losses = accelerator.gather(loss.detach())

for x in eval_loader:  # not prepared: one process's own loader, nothing padded
    scores = torch.gather(model(x), 1, torch.zeros(8, 1, dtype=torch.long))
    picked = x.gather(1, torch.zeros(8, 1, dtype=torch.long))
all_losses = accelerator.gather(step_losses)

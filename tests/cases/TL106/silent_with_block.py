import torch

model = torch.nn.Linear(16, 4)
val_loader = [(torch.randn(8, 16), torch.randint(0, 4, (8,)))]

model.eval()
with torch.no_grad():
    for x, y in val_loader:
        acc = (model(x).argmax(1) == y).float().mean()

hits = 0
for x, y in val_loader:
    with torch.inference_mode():
        logits = model(x)
    hits += (logits.argmax(1) == y).sum().item()

for x, y in val_loader:
    with torch.set_grad_enabled(False):
        probs = model(x).softmax(1)

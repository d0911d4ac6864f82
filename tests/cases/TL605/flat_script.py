import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset

accelerator = Accelerator()
model = torch.nn.Linear(16, 4)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
train_dataset = TensorDataset(torch.randn(100, 16), torch.randint(0, 4, (100,)))
eval_dataset = TensorDataset(torch.randn(37, 16), torch.randint(0, 4, (37,)))
train_dataloader = DataLoader(train_dataset, batch_size=8, shuffle=True)
eval_dataloader = DataLoader(eval_dataset, batch_size=8)
model, optimizer, train_dataloader, eval_dataloader = accelerator.prepare(
    model, optimizer, train_dataloader, eval_dataloader
)

model.eval()
correct, total = 0, 0
for step, (inputs, labels) in enumerate(eval_dataloader):
    with torch.no_grad():
        predictions = model(inputs).argmax(dim=-1)
    predictions, labels = accelerator.gather((predictions, labels))  # expect: TL605
    correct += (predictions == labels).sum()
    total += labels.numel()
accelerator.print(f"accuracy: {correct / total:.3f}")

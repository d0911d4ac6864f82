import torch
import torch.nn.functional as F
from torch import nn

model = nn.Sequential(
    nn.Flatten(),
    nn.Linear(784, 256),
    nn.ReLU(),
    nn.Linear(256, 10),
    nn.Softmax(dim=1),
)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
loader = [(torch.randn(64, 1, 28, 28), torch.randint(0, 10, (64,))) for _ in range(100)]

for epoch in range(5):
    for images, labels in loader:
        probs = model(images)
        loss = criterion(probs, labels)  # expect: TL109
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

head = nn.Linear(784, 10)
for images, labels in loader:
    logits = head(images.flatten(1))
    loss = F.cross_entropy(F.softmax(logits, dim=1), labels)  # expect: TL109
    log_probs = torch.log_softmax(logits, dim=-1)
    aux = F.cross_entropy(log_probs, labels)  # expect: TL109
    optimizer.zero_grad()
    (loss + aux).backward()
    optimizer.step()

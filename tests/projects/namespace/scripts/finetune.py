import torch
import torch.nn.functional as F

from lab.models.heads import Evaluator

head = Evaluator(64, 10)
optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
batches = [(torch.randn(16, 64), torch.randint(0, 10, (16,)))] * 4

for feats, y in batches:
    optimizer.zero_grad()
    loss = F.cross_entropy(head(feats), y)  # project: TL109
    loss.backward()
    optimizer.step()

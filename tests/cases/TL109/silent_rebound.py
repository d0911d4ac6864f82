import torch
import torch.nn.functional as F

model = torch.nn.Linear(16, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for x, y in []:
    out = model(x)
    probs = F.softmax(out, dim=1)
    print(probs[0])
    out = model(x)
    loss = F.cross_entropy(out, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

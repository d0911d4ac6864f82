# A script that never names a device: everything runs on the CPU, where `.item()` and
# `.numpy()` wait for nothing. A factory tensor made on the CPU is a host value too.
import torch
import torch.nn.functional as F

fc = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(fc.parameters(), lr=0.1)

for step in range(1000):
    input = torch.randn(32, 4)  # names such as `input` hold no device word
    y = input.sum(1, keepdim=True)
    optimizer.zero_grad()
    output = F.smooth_l1_loss(fc(input), y)
    loss = output.item()
    output.backward()
    optimizer.step()
    print(loss, fc(input).detach().numpy().mean())

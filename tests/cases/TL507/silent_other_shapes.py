import torch

x = torch.rand(8)
a = torch.log(2 + x)
b = torch.exp(x) - 2
c = 1 - torch.exp(-x)
d = torch.log(torch.sum(torch.exp(x)))
e = torch.log(1 + x, out=torch.empty(8))
f = 2 * torch.exp(x) - 1
g = torch.log(torch.sum(torch.exp(x), 0, dtype=torch.float64))
h = x.exp().sum().log()
i = torch.log(1 - x)

import torch

x = torch.rand(16)
a = torch.log(1 + x)  # expect: TL507
b = torch.log(x + 1.0)  # expect: TL507
c = torch.exp(x) - 1  # expect: TL507
d = torch.log(torch.sum(torch.exp(x), 0))  # expect: TL507
e = x.exp().sum(0).log()  # expect: TL507
f = torch.log1p(x) + torch.expm1(x) + torch.logsumexp(x, 0)

import numpy as np
import torch
from torch.func import jacrev, vmap


def qr(matrix):
    return torch.linalg.qr(matrix)


class Model:
    def norm(self):
        return 1.0


A = torch.randn(4, 4)
q, r = qr(A)
L = torch.linalg.cholesky(A @ A.T + torch.eye(4))
steps = torch.arange(0, 11)
outer = torch.outer(A[0], A[1])
n = torch.linalg.vector_norm(A) + np.linalg.norm(np.ones(3)) + A.norm() + Model().norm()
jac = vmap(jacrev(torch.sin))(A)
OVERRIDES = {torch.qr: lambda input, some=True: -1, torch.range: lambda *a: -1}
is_old = OVERRIDES.get(torch.norm) is torch.ger
doc = torch.cholesky.__doc__

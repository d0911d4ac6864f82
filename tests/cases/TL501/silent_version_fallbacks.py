import torch

try:
    from torch.linalg import solve as _solve
except ImportError:
    from torch import solve as _solve


def solve(A, B):
    return _solve(A, B)


if hasattr(torch.linalg, "eigh"):

    def eigh(A):
        return torch.linalg.eigh(A)

else:

    def eigh(A):
        return torch.symeig(A, eigenvectors=True)


if torch.__version__ < "1.9":
    rank = torch.matrix_rank(torch.eye(3))

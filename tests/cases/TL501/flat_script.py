import torch
import torch as th

A = torch.randn(6, 6)
A = A @ A.T + 6 * torch.eye(6)
B = torch.randn(6, 2)

X, LU = torch.solve(B, A)  # expect: TL501
values, vectors = th.symeig(A, eigenvectors=True)  # expect: TL501
rank = torch.matrix_rank(A)  # expect: TL501
eig_fn = torch.eig  # expect: TL501
fit = torch.lstsq(  # expect: TL501
    B,
    A,
)
good = torch.linalg.solve(A, B)

import torch

A = torch.randn(5, 5)
q, r = torch.qr(A)  # expect: TL502
q_full, r_full = torch.qr(A, some=False)  # expect: TL502
L = torch.cholesky(A @ A.T + torch.eye(5))  # expect: TL502
U = torch.cholesky(A @ A.T + torch.eye(5), upper=True)  # expect: TL502
chain = torch.chain_matmul(A, A, A)  # expect: TL502
outer = torch.ger(A[0], A[1])  # expect: TL502
steps = torch.range(0, 10)  # expect: TL502
norm = torch.norm(A)  # expect: TL502
row_norms = torch.norm(A, dim=1)  # expect: TL502
LU, pivots = torch.lu(A)  # expect: TL502
X = torch.lu_solve(torch.ones(5, 1), LU, pivots)  # expect: TL502
T, _ = torch.triangular_solve(torch.ones(5, 1), torch.triu(A))  # expect: TL502
fine = torch.linalg.qr(A)

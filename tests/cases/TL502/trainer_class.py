import torch as th
from torch import chain_matmul, qr


class OrthoTrainer:
    def __init__(self, model):
        self.model = model

    def orthogonalize(self):
        for p in self.model.parameters():
            if p.ndim == 2:
                q, _ = qr(p.data)  # expect: TL502
                p.data.copy_(q)

    def project(self, a, b, c):
        return chain_matmul(a, b, c)  # expect: TL502

    def scale(self, x):
        return x / th.norm(x, p=2, dim=-1, keepdim=True)  # expect: TL502

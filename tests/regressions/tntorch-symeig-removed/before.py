"""A Hessian-based helper that still calls the removed torch.symeig."""
import torch


def principal_curvatures(hessian):
    w, v = torch.symeig(hessian, eigenvectors=True)
    order = torch.argsort(w.abs(), descending=True)
    return w[order], v[:, order]


if __name__ == "__main__":
    a = torch.randn(5, 5)
    print(principal_curvatures(a + a.T))

"""A cross-approximation sweep that orthogonalises its cores with torch.qr."""
import torch


def sweep(cores):
    for n in range(len(cores) - 1):
        left = cores[n].reshape(-1, cores[n].shape[-1])
        q, r = torch.qr(left)
        cores[n] = q.reshape(*cores[n].shape[:-1], q.shape[-1])
        cores[n + 1] = torch.einsum("ij,jkl->ikl", r, cores[n + 1])
    return cores


if __name__ == "__main__":
    print([c.shape for c in sweep([torch.randn(1, 4, 3), torch.randn(3, 4, 3), torch.randn(3, 4, 1)])])

"""An optimisation helper that keeps every iteration's loss, graph included, in a history list
and backpropagates the last entry of that list."""
import torch


def optimize(tensors, loss_function, max_iter=1000, tol=1e-4, lr=1e-2):
    optimizer = torch.optim.Adam(tensors, lr=lr)
    losses = []
    for it in range(max_iter):
        optimizer.zero_grad()
        terms = loss_function(*tensors)
        losses.append(sum(terms))
        if len(losses) >= 2 and abs(losses[-1].item() - losses[-2].item()) < tol:
            break
        losses[-1].backward()
        optimizer.step()
    return losses


if __name__ == "__main__":
    target = torch.randn(8, 8)
    core = torch.randn(8, 8, requires_grad=True)
    optimize([core], lambda c: [((c - target) ** 2).sum(), 1e-3 * (c**2).sum()])

import torch.linalg
from torch import eig, lstsq, solve


def spectrum(matrix):
    values, _ = eig(matrix)  # expect: TL501
    return values


def least_squares(design, target):
    return lstsq(target, design).solution  # expect: TL501


def apply(fn, matrix):
    return fn(matrix, matrix)


def pick_solver(symmetric):
    return solve  # expect: TL501


results = apply(torch.linalg.solve, torch.eye(3))
REGISTERED = (solve, torch.linalg.inv)

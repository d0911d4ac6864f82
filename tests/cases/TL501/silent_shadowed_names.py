import numpy as np
import scipy.linalg
import torch


def solve(A, B):
    return scipy.linalg.solve(A, B)


def eig(matrix):
    return np.linalg.eig(matrix)


class Solver:
    def symeig(self, A):
        return torch.linalg.eigh(A)


def run(torch, A):
    return torch.solve(A, A)


x = solve(np.eye(3), np.ones(3))
w = eig(np.eye(2))
s = Solver().symeig(torch.eye(3))
t = torch.linalg.lstsq(torch.eye(3), torch.ones(3, 1)).solution

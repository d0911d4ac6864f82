import math

import numpy as np


def log(value):
    return math.log(value)


def exp(value):
    return math.exp(value)


y = np.log(1 + np.ones(3))
z = math.exp(0.5) - 1
w = log(1 + 2.0)
v = exp(0.1) - 1
u = np.log(np.sum(np.exp(np.ones(3)), 0))

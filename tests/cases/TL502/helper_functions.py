import functorch
import torch
from functorch import grad, jacrev  # expect: TL502
from functorch import make_functional  # expect: TL502


def per_sample_grads(loss_fn, params, x, y):
    return functorch.vmap(grad(loss_fn), in_dims=(None, 0, 0))(params, x, y)  # expect: TL502


def jacobian(fn, x):
    return jacrev(fn)(x)


def stateless(model):
    fmodel, params = make_functional(model)
    return fmodel, params


hess = functorch.hessian  # expect: TL502
square = torch.func.vmap(torch.square)

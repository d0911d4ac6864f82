def freeze(module):
    for p in module.parameters():
        p.require_grad = False  # expect: TL505


def freeze_named(model, prefix):
    for name, p in model.named_parameters():
        if name.startswith(prefix):
            p.requires_grad = False


def unfreeze(module):
    for p in module.parameters():
        p.require_grad, p.grad = True, None  # expect: TL505

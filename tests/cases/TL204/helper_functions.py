from torch.cuda.amp import GradScaler, autocast
from torch.cuda import amp


def make_scaler(init_scale=2.0**16):
    return GradScaler(init_scale=init_scale)  # expect: TL204


def forward(model, x):
    with autocast():  # expect: TL204
        return model(x)


def forward_old(model, x):
    with amp.autocast(True):  # expect: TL204
        return model(x)


def pick_context(enabled):
    ctx = autocast if enabled else None  # expect: TL204
    return ctx

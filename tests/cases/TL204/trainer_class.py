import torch as t
import torch.cuda.amp as cuda_amp


class Trainer:
    def __init__(self, model):
        self.model = model
        self.scaler = cuda_amp.GradScaler(enabled=True)  # expect: TL204

    @t.cuda.amp.autocast()  # expect: TL204
    def forward(self, x):
        return self.model(x)


amp_context = t.cuda.amp.autocast  # expect: TL204

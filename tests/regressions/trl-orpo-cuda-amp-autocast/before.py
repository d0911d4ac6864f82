"""A preference trainer that computes its loss under torch.cuda.amp.autocast()."""
from contextlib import nullcontext

import torch
import torch.nn.functional as F


class OddsRatioTrainer:
    def __init__(self, model, peft_has_been_casted_to_bf16=False, beta=0.1):
        self.model = model
        self.beta = beta
        self.peft_has_been_casted_to_bf16 = peft_has_been_casted_to_bf16

    def compute_loss(self, chosen, rejected):
        context = torch.cuda.amp.autocast() if self.peft_has_been_casted_to_bf16 else nullcontext()
        with context:
            chosen_logps = F.logsigmoid(self.model(chosen)).mean()
            rejected_logps = F.logsigmoid(self.model(rejected)).mean()
            return -F.logsigmoid(self.beta * (chosen_logps - rejected_logps))

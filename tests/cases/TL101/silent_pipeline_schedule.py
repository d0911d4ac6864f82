# Pipeline-parallel schedules run the backward passes of one step's micro-batches and return;
# the trainer that called them steps the optimizer (here in this file, or in another module).
import torch
from torch import nn


class PipelineEngine:
    def forward(self, model, micro_batch):
        return model(micro_batch).sum()

    def backward(self, loss, grad_accumulator):
        torch.autograd.backward(loss)


class AllForwardAllBackward(PipelineEngine):
    def train_batch_iter(self, model, batch, grad_accumulator):
        losses = []
        for micro_batch in batch:
            losses.append(self.forward(model, micro_batch))
        for loss in losses:
            self.backward(loss, grad_accumulator)
        return losses


def forward_backward_no_pipelining(model, data_iterator, num_microbatches):
    outputs = []
    for _ in range(num_microbatches):
        loss = model(next(data_iterator)).mean() / num_microbatches
        loss.backward()
        outputs.append(loss.detach())
    return outputs


def train_step(model, optimizer, data_iterator, num_microbatches):
    optimizer.zero_grad()
    losses = forward_backward_no_pipelining(model, data_iterator, num_microbatches)
    optimizer.step()
    return losses


def one_f_one_b(model, micro_batches, recv_grad):
    output_tensors = []
    for micro_batch in micro_batches:
        output_tensors.append(model(micro_batch))
        output = output_tensors.pop(0)
        torch.autograd.backward(output, grad_tensors=recv_grad())


model = nn.Linear(8, 8)

# main.py of a word-level language model: the Transformer is built from the sibling module
# model.py, whose forward ended in F.log_softmax(output, dim=-1) (shown in the comment below).
import torch
from torch import nn

import model as model_module

ntokens, bptt = 1000, 35
net = model_module.TransformerModel(ntokens, 200, 2, 200, 2, 0.2)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(net.parameters(), lr=20.0)
train_data = torch.randint(0, ntokens, (2000, 20))


def get_batch(source, i):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i : i + seq_len], source[i + 1 : i + 1 + seq_len].reshape(-1)


def train():
    net.train()
    for i in range(0, train_data.size(0) - 1, bptt):
        data, targets = get_batch(train_data, i)
        optimizer.zero_grad()
        output = net(data)  # model.py: return F.log_softmax(self.decoder(output), dim=-1)
        loss = criterion(output.view(-1, ntokens), targets)
        loss.backward()
        optimizer.step()

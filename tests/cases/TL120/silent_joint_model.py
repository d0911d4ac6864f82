# An encoder feeding a classifier, both trained by one loss: one optimizer per module, each
# stepped after the joint backward, the head's first (the encoder's gradients are wanted).
import torch
from torch import nn

encoder = nn.Linear(8, 4)
classifier = nn.Linear(4, 2)
enc_opt = torch.optim.Adam(encoder.parameters())
clf_opt = torch.optim.Adam(classifier.parameters())
loader = [(torch.randn(8, 8), torch.randint(0, 2, (8,))) for _ in range(10)]

for x, y in loader:
    features = encoder(x)
    enc_opt.zero_grad()
    clf_opt.zero_grad()
    nn.functional.cross_entropy(classifier(features), y).backward()
    clf_opt.step()
    enc_opt.step()

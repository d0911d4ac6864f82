import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.Linear(4, 4)
        self.head = torch.nn.Linear(4, 1)

    def forward(self, x):
        return self.head(self.encoder(x))


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x in [torch.randn(2, 4)] * 3:
    optimizer.zero_grad()
    model(x).sum().backward()
    model.encoder.zero_grad()  # freeze the encoder for this step, on purpose
    optimizer.step()

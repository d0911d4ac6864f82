import torch


def evaluate(model, loader):
    model.eval()
    for x, y in loader:
        print(model(x).argmax(1) == y)


def validate_and_log(model, loader):
    evaluate(model, loader)


def main(model, loader):
    with torch.no_grad():
        validate_and_log(model, loader)


torch.set_grad_enabled(False)
net = torch.nn.Linear(4, 2)
net.eval()
for x in [torch.randn(2, 4)]:
    print(net(x).argmax(1))

import torchvision

model = torchvision.models.resnet18(weights=None)
for param in model.parameters():
    param.require_grad = False  # expect: TL505
model.fc.weight.require_grad = True  # expect: TL505
model.fc.bias.requires_grad = True

import torch
from torch import nn
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

transform = transforms.Compose([transforms.RandomCrop(32, padding=4), transforms.ToTensor()])
train_set = datasets.CIFAR10("data", train=True, download=True, transform=transform)
test_set = datasets.CIFAR10("data", train=False, transform=transforms.ToTensor())
train_loader = DataLoader(train_set, batch_size=128, shuffle=True)  # expect: TL303
test_loader = DataLoader(test_set, batch_size=256)

model = nn.Sequential(nn.Conv2d(3, 32, 3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(10)).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

for epoch in range(30):
    model.train()
    for images, labels in train_loader:
        images, labels = images.cuda(), labels.cuda()
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(images), labels).backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        correct = sum((model(x.cuda()).argmax(1) == y.cuda()).sum().item() for x, y in test_loader)

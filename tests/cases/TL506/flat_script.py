import torchvision
from torchvision import models

resnet = torchvision.models.resnet50(pretrained=True)  # expect: TL506
vgg = models.vgg16(pretrained=False, num_classes=10)  # expect: TL506
mobilenet = models.mobilenet_v3_large(weights="DEFAULT")

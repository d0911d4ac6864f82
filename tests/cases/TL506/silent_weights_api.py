import torchvision
from torchvision.models import ResNet50_Weights, resnet50

a = resnet50(weights=ResNet50_Weights.IMAGENET1K_V2)
b = torchvision.models.resnet18(weights="IMAGENET1K_V1")
c = torchvision.models.vit_b_16(weights=None)

if torchvision.__version__ >= "0.13":
    d = torchvision.models.resnet18(weights="DEFAULT")
else:
    d = torchvision.models.resnet18(pretrained=True)

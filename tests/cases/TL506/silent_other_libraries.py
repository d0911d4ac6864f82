import timm
import torch
from torchvision.models import ResNet
from torchvision.models.resnet import BasicBlock


def resnet18(pretrained=False):
    return ResNet(BasicBlock, [2, 2, 2, 2])


encoder = timm.create_model("resnet50", pretrained=True, num_classes=0)
hub = torch.hub.load("pytorch/vision", "resnet18", pretrained=True)
own = resnet18(pretrained=True)

import torchvision.models as tvm
from torch import nn


class Classifier(nn.Module):
    def __init__(self, num_classes, pretrained=True):
        super().__init__()
        self.backbone = tvm.resnet34(pretrained=pretrained)  # expect: TL506
        self.backbone.fc = nn.Linear(self.backbone.fc.in_features, num_classes)
        self.aux = tvm.quantization.resnet18(pretrained=True, quantize=False)  # expect: TL506

    def forward(self, x):
        return self.backbone(x)

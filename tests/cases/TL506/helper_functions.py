from torchvision.models import resnet18
from torchvision.models.detection import fasterrcnn_resnet50_fpn
from torchvision.models.segmentation import deeplabv3_resnet50


def build_classifier(pretrained):
    return resnet18(pretrained=pretrained)  # expect: TL506


def build_detector(num_classes):
    return fasterrcnn_resnet50_fpn(
        pretrained=False,  # expect: TL506
        num_classes=num_classes,
    )


def build_segmenter():
    return deeplabv3_resnet50(pretrained=True, aux_loss=True)  # expect: TL506

class FineTuner:
    def __init__(self, backbone, head):
        self.backbone = backbone
        self.head = head
        for p in self.backbone.parameters():
            p.require_grad = False  # expect: TL505

    def unfreeze_backbone(self):
        for p in self.backbone.parameters():
            p.requires_grad = True
        self.backbone.weight.require_grad = True  # expect: TL505

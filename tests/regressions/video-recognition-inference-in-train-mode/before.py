import numpy as np
import torch
from torch import nn


def main(frames, device="cpu"):
    """Classify a video clip by clip: sixteen frames at a time, under no_grad."""
    model = nn.Sequential(nn.Flatten(), nn.Dropout(0.5), nn.Linear(16 * 3 * 8 * 8, 101))
    model.to(device)
    model.train()

    clip = []
    frames = iter(frames)
    retaining = True
    while retaining:
        frame = next(frames, None)
        retaining = frame is not None
        if not retaining:
            continue
        clip.append(frame)
        if len(clip) == 16:
            inputs = torch.from_numpy(np.stack(clip).astype(np.float32))[None].to(device)
            with torch.no_grad():
                outputs = model.forward(inputs)
            probs = torch.softmax(outputs, dim=1)
            print(int(probs.argmax(1)[0]))
            clip.pop(0)

"""A camera helper takes a list, an array or a tensor, each moved to the vertices' device."""
import numpy as np
import torch
import torch.nn.functional as F


def look(vertices, eye, direction=(0, 1, 0)):
    device = vertices.device
    if isinstance(direction, (list, tuple)):
        direction = torch.tensor(direction, dtype=torch.float32, device=device)
    elif isinstance(direction, np.ndarray):
        direction = torch.from_numpy(direction).to(device)
    elif torch.is_tensor(direction):
        direction = direction.to(device)
    eye = torch.as_tensor(eye, dtype=torch.float32, device=device)
    z_axis = F.normalize(direction, eps=1e-5)
    return (vertices - eye[None, None, :]) * z_axis

import os

import torch


def load_partitions(input_checkpoint_path, mp_partitions, layer_idx):
    """Load one layer's weights from every tensor-parallel partition of a checkpoint."""
    loaded = []
    for i in range(mp_partitions):
        loaded.append(
            torch.load(
                os.path.join(
                    input_checkpoint_path,
                    f"layer_{layer_idx:02}-model_{i:02}-model_states.pt",
                ),
                map_location=torch.device("cpu"),
                weights_only=False,
            )
        )
    return loaded

"""A Hugging Face model trained for a few steps and saved with `save_pretrained` (safetensors,
written in Rust by path) over the user's earlier export, then reloaded with `from_pretrained`;
a raw `safetensors.torch.save_file` too. No download: the model is built from a config."""

import torch
from safetensors.torch import load_file, save_file
from torch.utils.data import DataLoader, TensorDataset
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
config = GPT2Config(n_layer=1, n_head=2, n_embd=16, vocab_size=64, n_positions=16)
model = GPT2LMHeadModel(config)
tokens = torch.randint(0, 64, (16, 8))
loader = DataLoader(TensorDataset(tokens), batch_size=4)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for epoch in range(3):
    for (batch,) in loader:
        optimizer.zero_grad()
        model(input_ids=batch, labels=batch).loss.backward()
        optimizer.step()
    model.save_pretrained("hf_model")  # the workspace already has hf_model/ from an earlier run
    reloaded = GPT2LMHeadModel.from_pretrained("hf_model")
    for (name, a), b in zip(model.state_dict().items(), reloaded.state_dict().values()):
        assert torch.equal(a, b), name
    save_file({"w": model.lm_head.weight.detach().clone()}, "weights.safetensors")
    assert torch.equal(load_file("weights.safetensors")["w"], model.lm_head.weight)

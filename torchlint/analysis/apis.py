"""The table of known APIs, kept as data: what the recognisers turn calls of PyTorch and of the
training frameworks into. Adding an API means adding an entry here, not editing the walker."""

from __future__ import annotations

import re

SYNC_METHODS = {"item", "tolist", "cpu", "numpy"}


AMP_DEPRECATED = {"torch.cuda.amp.autocast", "torch.cuda.amp.GradScaler"}


CLIP_FUNCTIONS = {
    "torch.nn.utils.clip_grad_norm_",
    "torch.nn.utils.clip_grad_value_",
    "torch.nn.utils.clip_grad.clip_grad_norm_",
    "torch.nn.utils.clip_grad.clip_grad_value_",
}


DEVICE_SYNCS = {"torch.cuda.synchronize", "torch.cuda.empty_cache"}


TIMERS = {"time.time", "time.perf_counter", "time.monotonic", "time.process_time", "timeit"}
# A library function named like a clock read (`time_sync()`, `timer()`, `tic()`).
TIMER_NAME = re.compile(r"(^|_)(time|timer|timestamp|tic|toc|clock)(_sync|_synchronized)?$")


HOST_CONSTRUCTORS = {
    f"torch.{name}"
    for name in (
        "tensor", "as_tensor", "zeros", "ones", "empty", "full", "rand", "randn", "randint",
        "randperm", "arange", "linspace", "logspace", "eye",
    )
}  # fmt: skip


AMP_DEPRECATED_NAMES = {"autocast", "GradScaler"}


# An `if` whose test reads a version (`torch.__version__`, `hasattr(torch, "linalg")`,
# `_TORCH_GREATER_EQUAL_2_0`) chooses code for one PyTorch release or another: what it runs on the
# older side is a deliberate fallback, not a forgotten deprecated call.
COMPAT_TEST = re.compile(
    r"hasattr|version|torch_(?:ge|gt|le|lt|greater|less|older|newer)|_TORCH_|is_torch",
    re.IGNORECASE,
)


ITER_WRAPPERS = {"enumerate", "tqdm", "zip", "iter", "tqdm.tqdm", "auto.tqdm", "track"}


# Methods of a module (or tensor) that return the object itself: `model.to(device)`.
RETURNS_SELF = {
    "to", "cuda", "cpu", "float", "half", "double", "bfloat16", "train", "eval",
    "requires_grad_", "to_empty", "share_memory",
}  # fmt: skip

# Wrappers that return (a module that runs) the module they are given: it keeps its class.
MODULE_WRAPPERS = {
    "torch.nn.parallel.DistributedDataParallel",
    "torch.nn.parallel.distributed.DistributedDataParallel",
    "torch.nn.DataParallel",
    "torch.nn.parallel.DataParallel",
    "torch.nn.parallel.data_parallel.DataParallel",
    "torch.distributed.fsdp.FullyShardedDataParallel",
    "torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel",
    "torch.distributed.fsdp.fully_shard",
    "torch.distributed._composable.fsdp.fully_shard",
    "torch.compile",
    "torch.jit.script",
    "torch.nn.SyncBatchNorm.convert_sync_batchnorm",
    "apex.parallel.DistributedDataParallel",
}

# Methods of a training framework that hand back the objects they are given, in order,
# each keeping its kind: `model, opt, loader = accelerator.prepare(model, opt, loader)`.
FRAMEWORK_SETUP = {"prepare", "setup", "setup_module", "setup_dataloaders", "prepare_model"}

# Methods of a training framework object (an Accelerator, a Fabric, a DeepSpeed engine) that
# the loop model reads: the contexts it opens and the gradient work it does itself.
FRAMEWORK_AUTOCAST = {"autocast"}  # `with accelerator.autocast():`, `with fabric.autocast():`
# `with accelerator.accumulate(model):` the prepared optimizer steps and clears (and the
# prepared scheduler steps) only at the end of each accumulation window.
FRAMEWORK_ACCUMULATE = {"accumulate"}
# Clipping that unscales first and touches no optimizer state.
FRAMEWORK_CLIP = {"clip_grad_norm_", "clip_grad_value_", "clip_gradients"}
# A DeepSpeed engine: its `step()` updates the weights and clears the gradients (it also runs
# the engine's scheduler and its gradient accumulation).
ENGINE_NAME = re.compile(r"engine|deepspeed", re.IGNORECASE)


STREAMING = re.compile(r"webdataset|iterable|stream|datapipe|torchtext\.datasets", re.IGNORECASE)

# An iterable named like data: a loader, batches, a dataset.
DATA_NAME = re.compile(r"loader|batches|dataset|(^|\W|_)(dl|data)($|\W|_)", re.IGNORECASE)


# --- What constructors build ------------------------------------------------------------------

_SCALER_CLASSES = {
    "torch.cuda.amp.GradScaler",
    "torch.amp.GradScaler",
    "torch.GradScaler",
    "torch.cpu.amp.GradScaler",
    "torch.amp.grad_scaler.GradScaler",
    "torch.cuda.amp.grad_scaler.GradScaler",
    "torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler",
}
_SCHEDULER_PREFIXES = (
    "torch.optim.lr_scheduler.",
    "timm.scheduler.",
    "torch.optim.swa_utils.SWALR",
)
_SCHEDULER_FACTORIES = re.compile(r"^transformers(\.optimization)?\.get_\w*schedule\w*$")
_OPTIMIZER_PREFIXES = (
    "torch.optim.",
    "bitsandbytes.optim.",
    "bnb.optim.",
    "apex.optimizers.",
    "timm.optim.",
    "deepspeed.ops.",
    "torch.distributed.optim.",
    "transformers.AdamW",
    "transformers.Adafactor",
    "transformers.optimization.",
)
_DATALOADER_CLASSES = {"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"}
# Libraries' subclasses of `DataLoader` that keep its contract (its `shuffle`, `sampler`,
# `num_workers`, `pin_memory`): graph loaders. Samplers that draw their own random subgraphs
# (GraphSAINT, Cluster-GCN, ShaDow) are left out: their order is not the loader's.
_DATALOADER_CLASSES |= {
    f"torch_geometric.loader.{name}"
    for name in (
        "DataLoader",
        "NeighborLoader",
        "LinkNeighborLoader",
        "HGTLoader",
        "DenseDataLoader",
        "DataListLoader",
        "NeighborSampler",
    )
}
_DATALOADER_CLASSES |= {
    "torch_geometric.data.DataLoader",
    "dgl.dataloading.DataLoader",
    "dgl.dataloading.GraphDataLoader",
}
_OTHER_ROLES = {
    "torch.utils.data.DistributedSampler": "distributed-sampler",
    "torch.utils.data.distributed.DistributedSampler": "distributed-sampler",
    "torch.nn.Softmax": "softmax",
    "torch.nn.LogSoftmax": "log_softmax",
    "torch.nn.Sigmoid": "sigmoid",
    "torch.nn.BCEWithLogitsLoss": "bce-with-logits",
    "torch.nn.CrossEntropyLoss": "cross-entropy",
    "torch.nn.modules.loss.CrossEntropyLoss": "cross-entropy",
    "torch.nn.NLLLoss": "nll-loss",
    "torch.nn.Sequential": "sequential",
    "torch.utils.data.TensorDataset": "tensor-dataset",
    "torch.utils.data.random_split": "subset",
    "torch.utils.data.Subset": "subset",
    "torch.utils.data.dataset.random_split": "subset",
    "torch.utils.data.dataset.TensorDataset": "tensor-dataset",
}


def constructor_role(qualname: str) -> str | None:
    if qualname in _SCALER_CLASSES:
        return "scaler"
    if qualname in _DATALOADER_CLASSES:
        return "dataloader"
    if qualname in _OTHER_ROLES:
        return _OTHER_ROLES[qualname]
    if qualname.startswith(_SCHEDULER_PREFIXES) or _SCHEDULER_FACTORIES.match(qualname):
        return "scheduler"
    if qualname.startswith(_OPTIMIZER_PREFIXES):
        last = qualname.rsplit(".", 1)[-1]
        if last[:1].isupper() or last.startswith("create_optimizer"):
            return "optimizer"
    return None


AUTOCAST_FUNCTIONS = {
    "torch.autocast": None,
    "torch.amp.autocast": None,
    "torch.amp.autocast_mode.autocast": None,
    "torch.cuda.amp.autocast": "cuda",
    "torch.cuda.amp.autocast_mode.autocast": "cuda",
    "torch.cpu.amp.autocast": "cpu",
}
NO_GRAD_FUNCTIONS = {"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad"}
ENABLE_GRAD_FUNCTIONS = {"torch.enable_grad", "torch.autograd.enable_grad"}
PROFILE_FUNCTIONS = {
    "torch.profiler.profile",
    "torch.autograd.profiler.profile",
    "torch.profiler.record_function",
    "torch.autograd.profiler.record_function",
    "torch.cuda.nvtx.range",
}

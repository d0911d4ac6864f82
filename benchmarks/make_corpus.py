"""Generate a corpus of varied PyTorch training scripts for benchmarking torchlint.

Every file is assembled from templates written for this purpose: a docstring, imports, a config
(argparse or a dataclass), small utilities, a synthetic dataset class, one or two model classes,
a training loop in one of three shapes (flat in `main()`, `train_one_epoch()` / `evaluate()`
helpers, or a `Trainer` class), evaluation, checkpointing and a `main()`. Per file, a seeded RNG
picks the domain, the architecture, the variable names, the optimizer and scheduler, AMP,
gradient accumulation, clipping, logging, and sprinkles in a few training-loop smells (the bugs
torchlint looks for and some it will look for later). The same seed gives the same corpus.

    python benchmarks/make_corpus.py OUT_DIR [--count 220] [--seed 1234]
"""

from __future__ import annotations

import argparse
import random
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from string import Template

DEFAULT_COUNT = 220
DEFAULT_SEED = 1234

DOMAINS = ("image", "tabular", "sequence", "text")
STRUCTURES = ("flat", "helpers", "trainer")
AMP_MODES = ("none", "fp16", "fp16_legacy", "bf16")

# Smells that current rules report (TL1xx-TL3xx) and smells for rules still to come.
SMELLS_NOW = (
    "no_zero_grad",  # TL102
    "zero_grad_late",  # TL103
    "step_first",  # TL104
    "no_step",  # TL101
    "eval_leak",  # TL105
    "item_every_step",  # TL301
    "print_loss",  # TL301
    "unscaled_backward",  # TL201 (fp16 only)
    "no_scaler_update",  # TL202 (fp16 only)
    "step_bypasses_scaler",  # TL202 (fp16 only)
)
SMELLS_LATER = (
    "eval_no_grad",
    "sched_before_step",
    "loss_with_graph",
    "softmax_into_ce",
    "workers_zero",
    "no_shuffle",
    "no_set_epoch",
    "clip_no_unscale",
    "fp16_no_scaler",
    "cuda_sync",
    "blocking_copy",
    "zeros_to_device",
)
_AMP_SMELLS = ("unscaled_backward", "no_scaler_update", "step_bypasses_scaler", "clip_no_unscale")

NAME_CHOICES: dict[str, tuple[str, ...]] = {
    "model": ("model", "net", "network", "classifier", "backbone_model"),
    "opt": ("optimizer", "opt", "optimiser", "optim"),
    "loader": ("train_loader", "loader", "train_dl", "dataloader", "trn_loader"),
    "val_loader": ("val_loader", "valid_loader", "eval_loader", "test_loader", "val_dl"),
    "crit": ("criterion", "loss_fn", "loss_func", "objective"),
    "sched": ("scheduler", "lr_scheduler", "sched"),
    "scaler": ("scaler", "grad_scaler", "amp_scaler"),
    "out": ("outputs", "logits", "out", "preds", "output"),
    "loss": ("loss", "batch_loss"),
    "step": ("step", "i", "batch_idx", "it"),
    "epoch": ("epoch", "ep"),
}
XY_CHOICES = (
    ("inputs", "targets"),
    ("x", "y"),
    ("data", "target"),
    ("xb", "yb"),
    ("batch_x", "batch_y"),
)
DOMAIN_XY = {
    "image": (("images", "labels"), ("imgs", "labels")),
    "text": (("tokens", "labels"), ("input_ids", "labels")),
    "sequence": (("seqs", "labels"), ("series", "target")),
    "tabular": (("features", "target"),),
}


@dataclass
class Spec:
    """Every choice made for one generated file."""

    index: int
    domain: str
    task: str  # "classification" or "regression"
    arch: str
    structure: str
    config: str  # "argparse" or "dataclass"
    amp: str
    accum: bool
    scheduler: str  # "none", "epoch", "batch", "plateau"
    sched_kind: str
    optimizer: str
    clip: bool
    logger: bool
    distributed: bool
    non_blocking: bool
    zero_grad_style: str  # "top", "after_step", "set_to_none", "model"
    batch_style: str  # "tuple", "batch", "list"
    eval_style: str  # "with", "decorator", "inference_mode"
    helpers: tuple[str, ...]
    smells: frozenset[str]
    names: dict[str, str] = field(default_factory=dict)

    def has(self, smell: str) -> bool:
        return smell in self.smells

    @property
    def classification(self) -> bool:
        return self.task == "classification"

    @property
    def scaler(self) -> bool:
        return self.amp in ("fp16", "fp16_legacy") and not self.has("fp16_no_scaler")


# ---------------------------------------------------------------------------------------------
# Small text helpers


def block(text: str, names: Mapping[str, str] | None = None, level: int = 0) -> list[str]:
    """Dedent a template, substitute `$names`, indent by `level` steps of four spaces."""
    body = textwrap.dedent(text).strip("\n")
    if names is not None:
        body = Template(body).substitute(names)
    pad = "    " * level
    return [pad + line if line.strip() else "" for line in body.split("\n")]


def indent(lines: Iterable[str], level: int) -> list[str]:
    pad = "    " * level
    return [pad + line if line.strip() else "" for line in lines]


# ---------------------------------------------------------------------------------------------
# Choosing a spec


def choose_spec(rng: random.Random, index: int) -> Spec:
    domain = rng.choice(DOMAINS)
    task = "classification"
    if domain == "tabular":
        task = rng.choice(("classification", "regression", "regression"))
    arch = rng.choice(
        {
            "image": ("cnn", "resnet"),
            "tabular": ("mlp", "resmlp"),
            "sequence": ("lstm", "tcn"),
            "text": ("bag", "transformer", "bilstm"),
        }[domain]
    )
    amp = rng.choices(AMP_MODES, weights=(5, 3, 2, 1))[0]
    scheduler = rng.choices(("none", "epoch", "batch", "plateau"), weights=(3, 4, 3, 1))[0]
    sched_kind = {
        "none": "",
        "epoch": rng.choice(("StepLR", "CosineAnnealingLR", "MultiStepLR", "ExponentialLR")),
        "batch": rng.choice(("OneCycleLR", "LambdaLR")),
        "plateau": "ReduceLROnPlateau",
    }[scheduler]
    spec = Spec(
        index=index,
        domain=domain,
        task=task,
        arch=arch,
        structure=rng.choices(STRUCTURES, weights=(4, 4, 3))[0],
        config=rng.choice(("argparse", "argparse", "dataclass")),
        amp=amp,
        accum=rng.random() < 0.3,
        scheduler=scheduler,
        sched_kind=sched_kind,
        optimizer=rng.choice(("SGD", "Adam", "AdamW", "AdamW")),
        clip=rng.random() < 0.45,
        logger=rng.random() < 0.4,
        distributed=rng.random() < 0.15,
        non_blocking=rng.random() < 0.4,
        zero_grad_style=rng.choices(
            ("top", "after_step", "set_to_none", "model"), weights=(5, 2, 3, 1)
        )[0],
        batch_style=rng.choices(("tuple", "batch", "list"), weights=(6, 2, 1))[0],
        eval_style=rng.choice(("with", "with", "decorator", "inference_mode")),
        helpers=tuple(
            h
            for h, p in (
                ("meter", 0.45),
                ("accuracy", 0.4),
                ("count_params", 0.5),
                ("checkpoint", 0.7),
                ("early_stopping", 0.25),
                ("ema", 0.15),
                ("timer", 0.3),
                ("save_config", 0.3),
                ("predict", 0.35),
                ("confusion", 0.35),
            )
            if rng.random() < p
        ),
        smells=frozenset(),
    )
    spec.smells = choose_smells(rng, spec)
    spec.names = choose_names(rng, spec)
    return spec


def choose_smells(rng: random.Random, spec: Spec) -> frozenset[str]:
    smells: set[str] = set()
    if rng.random() < 0.25:
        return frozenset()  # a clean file
    # At most one bug in the order of zero_grad / backward / step, where the loop is plain.
    if not spec.accum and rng.random() < 0.25:
        ordering = ["no_zero_grad"]
        if spec.amp == "none":
            ordering += ["zero_grad_late", "step_first", "no_step"]
        smells.add(rng.choice(ordering))
    weights = {
        "eval_leak": 4,
        "item_every_step": 6,
        "print_loss": 2,
        "unscaled_backward": 2,
        "no_scaler_update": 2,
        "step_bypasses_scaler": 1,
    }
    for _ in range(rng.choice((0, 1, 1, 2))):
        smells.add(rng.choices(list(weights), weights=list(weights.values()))[0])
    for _ in range(rng.choice((0, 1, 1, 2, 3))):
        smells.add(rng.choice(SMELLS_LATER))
    if not spec.scaler or spec.accum:
        smells -= set(_AMP_SMELLS)
    if "loss_with_graph" in smells:
        smells.discard("item_every_step")  # both would be the same accumulator line
    if not spec.classification:
        smells.discard("softmax_into_ce")
    if not spec.distributed:
        smells.discard("no_set_epoch")
    if spec.amp not in ("fp16", "fp16_legacy"):
        smells.discard("fp16_no_scaler")
    if not spec.clip:
        smells.discard("clip_no_unscale")
    if "fp16_no_scaler" in smells:
        smells -= set(_AMP_SMELLS)
    return frozenset(smells)


def choose_names(rng: random.Random, spec: Spec) -> dict[str, str]:
    names = {key: rng.choice(options) for key, options in NAME_CHOICES.items()}
    xy = rng.choice(XY_CHOICES + DOMAIN_XY[spec.domain] * 2)
    names["x"], names["y"] = xy
    names["cfg"] = "args" if spec.config == "argparse" else rng.choice(("cfg", "config"))
    names["device"] = "device"
    names["use_amp"] = "use_amp"
    names["log"] = "logger.info" if spec.logger else "print"
    if names["loss"] == names["out"]:
        names["out"] = "outputs"
    return names


# ---------------------------------------------------------------------------------------------
# File sections


def header(rng: random.Random, spec: Spec) -> list[str]:
    what = {
        "cnn": "a small convolutional network",
        "resnet": "a compact residual network",
        "mlp": "a multilayer perceptron",
        "resmlp": "a residual MLP",
        "lstm": "an LSTM sequence classifier",
        "tcn": "a temporal convolutional network",
        "bag": "a bag-of-embeddings text classifier",
        "transformer": "a small Transformer encoder",
        "bilstm": "a bidirectional LSTM text classifier",
    }[spec.arch]
    data = {
        "image": "synthetic 32x32 RGB images",
        "tabular": "synthetic tabular data",
        "sequence": "synthetic multivariate time series",
        "text": "a synthetic topic-classification corpus",
    }[spec.domain]
    lines: list[str] = []
    if rng.random() < 0.2:
        lines += ["#!/usr/bin/env python", "# Copyright (c) the authors. MIT license.", ""]
    doc = [f'"""Train {what} on {data}.', ""]
    extra = []
    if spec.amp != "none":
        extra.append("Mixed precision is enabled on GPU.")
    if spec.accum:
        extra.append("Gradients are accumulated over several micro-batches.")
    if spec.distributed:
        extra.append("Runs single-process or under torchrun with DistributedDataParallel.")
    extra.append(
        rng.choice(
            (
                "Usage: python train.py --epochs 10 --lr 3e-4",
                "Everything is generated in memory, so the script runs anywhere.",
                "Loosely based on the reference training scripts of the PyTorch examples.",
            )
        )
    )
    doc += [*extra, '"""', ""]
    return lines + doc


def imports(spec: Spec) -> list[str]:
    std = ["import math", "import os", "import random", "import time"]
    if spec.config == "argparse":
        std.insert(0, "import argparse")
    if "save_config" in spec.helpers:
        std.append("import json")
    if spec.logger:
        std.append("import logging")
    if spec.config == "dataclass":
        std.append("from dataclasses import asdict, dataclass")
    lines = sorted(std, key=lambda s: (s.startswith("from"), s))
    lines += ["", "import torch"]
    if spec.distributed:
        lines.append("import torch.distributed as dist")
    lines += ["import torch.nn as nn", "import torch.nn.functional as F"]
    if spec.amp == "fp16_legacy" and spec.index % 2 == 0:
        lines.append("from torch.cuda.amp import GradScaler, autocast")
    data = "from torch.utils.data import DataLoader, Dataset"
    if spec.distributed:
        data += ", DistributedSampler"
    lines.append(data)
    return [*lines, "", ""]


def constants(spec: Spec) -> list[str]:
    lines = []
    if spec.domain == "image":
        lines += ["NUM_CLASSES = 10", "IMAGE_SIZE = 32"]
    elif spec.domain == "tabular":
        lines += ["NUM_FEATURES = 24"]
        lines += ["NUM_CLASSES = 4"] if spec.classification else []
    elif spec.domain == "sequence":
        lines += ["NUM_CLASSES = 5", "SEQ_LEN = 48", "NUM_CHANNELS = 6"]
    else:
        lines += ["NUM_CLASSES = 4", "VOCAB_SIZE = 5000", "MAX_LEN = 64", "PAD_ID = 0"]
    if spec.logger:
        lines += ["", "logger = logging.getLogger(__name__)"]
    return [*lines, "", ""]


def config_section(spec: Spec) -> list[str]:
    fields = [
        ("epochs", "int", "3"),
        ("batch_size", "int", "32"),
        ("lr", "float", "1e-3" if spec.optimizer != "SGD" else "0.05"),
        ("weight_decay", "float", "0.01" if spec.optimizer == "AdamW" else "0.0"),
        ("seed", "int", "0"),
        ("log_every", "int", "20"),
        ("num_workers", "int", "2"),
        ("output_dir", "str", '"checkpoints"'),
        ("n_train", "int", "1024"),
        ("n_val", "int", "256"),
        ("hidden", "int", "64"),
    ]
    if spec.accum:
        fields.append(("accum_steps", "int", "4"))
    if spec.clip:
        fields.append(("clip", "float", "1.0"))
    if spec.amp != "none":
        fields.append(("amp", "bool", "True"))
    if spec.scheduler == "batch":
        fields.append(("warmup_steps", "int", "50"))
    if "early_stopping" in spec.helpers:
        fields.append(("patience", "int", "5"))
    if spec.config == "dataclass":
        lines = ["@dataclass", "class Config:"]
        lines += [f"    {name}: {kind} = {default}" for name, kind, default in fields]
        return [*lines, "", ""]
    lines = [
        "def parse_args():",
        '    parser = argparse.ArgumentParser(description="Train on synthetic data.")',
    ]
    for name, kind, default in fields:
        flag = "--" + name.replace("_", "-")
        if kind == "bool":
            lines.append(f'    parser.add_argument("{flag}", action="store_true")')
        else:
            lines.append(f'    parser.add_argument("{flag}", type={kind}, default={default})')
    lines.append("    return parser.parse_args()")
    return [*lines, "", ""]


def utilities(rng: random.Random, spec: Spec) -> list[str]:
    n = spec.names
    out: list[str] = []
    out += block(
        """
        def set_seed(seed):
            random.seed(seed)
            torch.manual_seed(seed)
            if torch.cuda.is_available():
                torch.cuda.manual_seed_all(seed)
        """
    )
    out += ["", ""]
    if spec.logger:
        out += block(
            """
            def setup_logging(output_dir):
                os.makedirs(output_dir, exist_ok=True)
                logging.basicConfig(
                    level=logging.INFO,
                    format="%(asctime)s %(levelname)s %(message)s",
                    handlers=[
                        logging.StreamHandler(),
                        logging.FileHandler(os.path.join(output_dir, "train.log")),
                    ],
                )
            """
        )
        out += ["", ""]
    if "meter" in spec.helpers:
        out += block(
            '''
            class AverageMeter:
                """Keeps a running average of a scalar, e.g. the loss over an epoch."""

                def __init__(self, name, fmt=":.4f"):
                    self.name = name
                    self.fmt = fmt
                    self.reset()

                def reset(self):
                    self.val = 0.0
                    self.sum = 0.0
                    self.count = 0
                    self.avg = 0.0

                def update(self, val, n=1):
                    self.val = val
                    self.sum += val * n
                    self.count += n
                    self.avg = self.sum / max(self.count, 1)

                def __str__(self):
                    fmtstr = "{name} {val" + self.fmt + "} ({avg" + self.fmt + "})"
                    return fmtstr.format(**self.__dict__)
            '''
        )
        out += ["", ""]
    if "accuracy" in spec.helpers and spec.classification:
        out += block(
            '''
            def accuracy(output, target, topk=(1,)):
                """Top-k accuracy over a batch, in percent."""
                with torch.no_grad():
                    maxk = min(max(topk), output.size(1))
                    _, pred = output.topk(maxk, 1, True, True)
                    pred = pred.t()
                    correct = pred.eq(target.view(1, -1).expand_as(pred))
                    res = []
                    for k in topk:
                        k = min(k, maxk)
                        correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
                        res.append(correct_k.mul_(100.0 / target.size(0)))
                    return res
            '''
        )
        out += ["", ""]
    if "count_params" in spec.helpers:
        out += block(
            """
            def count_parameters(module):
                return sum(p.numel() for p in module.parameters() if p.requires_grad)
            """
        )
        out += ["", ""]
    if "timer" in spec.helpers:
        out += block(
            """
            def format_seconds(seconds):
                minutes, seconds = divmod(int(seconds), 60)
                hours, minutes = divmod(minutes, 60)
                return f"{hours:d}:{minutes:02d}:{seconds:02d}"
            """
        )
        out += ["", ""]
    if "checkpoint" in spec.helpers:
        out += block(
            """
            def save_checkpoint(state, is_best, output_dir, filename="checkpoint.pt"):
                os.makedirs(output_dir, exist_ok=True)
                path = os.path.join(output_dir, filename)
                torch.save(state, path)
                if is_best:
                    torch.save(state, os.path.join(output_dir, "model_best.pt"))
                return path


            def load_checkpoint(path, $model, $opt=None, map_location="cpu"):
                checkpoint = torch.load(path, map_location=map_location)
                $model.load_state_dict(checkpoint["model"])
                if $opt is not None and "optimizer" in checkpoint:
                    $opt.load_state_dict(checkpoint["optimizer"])
                return checkpoint.get("epoch", 0) + 1, checkpoint.get("best_metric")
            """,
            n,
        )
        out += ["", ""]
    if "early_stopping" in spec.helpers:
        better = "<" if not spec.classification else ">"
        out += block(
            f'''
            class EarlyStopping:
                """Stops training when the validation metric has not improved for a while."""

                def __init__(self, patience=5, min_delta=0.0):
                    self.patience = patience
                    self.min_delta = min_delta
                    self.best = None
                    self.bad_epochs = 0

                def step(self, metric):
                    if self.best is None or metric {better} self.best:
                        self.best = metric
                        self.bad_epochs = 0
                        return False
                    self.bad_epochs += 1
                    return self.bad_epochs >= self.patience
            '''
        )
        out += ["", ""]
    if "ema" in spec.helpers:
        out += block(
            '''
            class ModelEMA:
                """Exponential moving average of a model's weights, used for evaluation."""

                def __init__(self, module, decay=0.999):
                    self.decay = decay
                    self.shadow = {
                        k: v.detach().clone() for k, v in module.state_dict().items()
                    }

                @torch.no_grad()
                def update(self, module):
                    for k, v in module.state_dict().items():
                        if v.dtype.is_floating_point:
                            self.shadow[k].mul_(self.decay).add_(v.detach(), alpha=1 - self.decay)
                        else:
                            self.shadow[k].copy_(v)

                def copy_to(self, module):
                    module.load_state_dict(self.shadow)
            '''
        )
        out += ["", ""]
    if "save_config" in spec.helpers:
        dump = "vars(cfg)" if spec.config == "argparse" else "asdict(cfg)"
        out += block(
            f"""
            def save_config(cfg, output_dir):
                os.makedirs(output_dir, exist_ok=True)
                with open(os.path.join(output_dir, "config.json"), "w") as f:
                    json.dump({dump}, f, indent=2, default=str)
            """
        )
        out += ["", ""]
    if "predict" in spec.helpers:
        head = ".softmax(dim=-1)" if spec.classification else ""
        out += block(
            f'''
            @torch.no_grad()
            def predict($model, inputs, $device, batch_size=256):
                """Model outputs for a stack of inputs, computed in chunks, returned on the CPU."""
                $model.eval()
                results = []
                for start in range(0, inputs.size(0), batch_size):
                    chunk = inputs[start : start + batch_size].to($device)
                    results.append($model(chunk){head}.cpu())
                return torch.cat(results)
            ''',
            n,
        )
        out += ["", ""]
    if "confusion" in spec.helpers and spec.classification:
        out += block(
            """
            def confusion_matrix($model, data_loader, $device, num_classes=NUM_CLASSES):
                matrix = torch.zeros(num_classes, num_classes, dtype=torch.long)
                $model.eval()
                with torch.no_grad():
                    for inputs, targets in data_loader:
                        predicted = $model(inputs.to($device)).argmax(dim=1).cpu()
                        for t, p in zip(targets.tolist(), predicted.tolist()):
                            matrix[t, p] += 1
                return matrix


            def per_class_report(matrix):
                rows = []
                for c in range(matrix.size(0)):
                    support = matrix[c].sum().item()
                    predicted = matrix[:, c].sum().item()
                    recall = matrix[c, c].item() / support if support else 0.0
                    precision = matrix[c, c].item() / predicted if predicted else 0.0
                    rows.append(f"class {c}: precision {precision:.3f} recall {recall:.3f} "
                                f"support {support}")
                return "\\n".join(rows)
            """,
            n,
        )
        out += ["", ""]
    if spec.scheduler == "batch" and spec.sched_kind == "LambdaLR":
        out += block(
            """
            def warmup_cosine(warmup_steps, total_steps):
                def lr_lambda(current):
                    if current < warmup_steps:
                        return (current + 1) / max(1, warmup_steps)
                    progress = (current - warmup_steps) / max(1, total_steps - warmup_steps)
                    return 0.5 * (1.0 + math.cos(math.pi * min(progress, 1.0)))

                return lr_lambda
            """
        )
        out += ["", ""]
    return out


def dataset_section(rng: random.Random, spec: Spec) -> list[str]:
    if spec.domain == "image":
        text = '''
            class SyntheticImages(Dataset):
                """Noise images with a bright square whose position and colour give the class."""

                def __init__(self, n, num_classes=NUM_CLASSES, size=IMAGE_SIZE, seed=0,
                             augment=False):
                    g = torch.Generator().manual_seed(seed)
                    self.labels = torch.randint(0, num_classes, (n,), generator=g)
                    self.images = torch.randn(n, 3, size, size, generator=g) * 0.5
                    cell = size // 4
                    for c in range(num_classes):
                        row, col = divmod(c % 16, 4)
                        idx = self.labels == c
                        patch = (slice(row * cell, (row + 1) * cell),
                                 slice(col * cell, (col + 1) * cell))
                        self.images[idx, c % 3, patch[0], patch[1]] += 1.5
                    self.augment = augment

                def __len__(self):
                    return len(self.labels)

                def __getitem__(self, index):
                    image = self.images[index]
                    if self.augment and random.random() < 0.5:
                        image = image + 0.1 * torch.randn_like(image)
                    return image, self.labels[index]
            '''
    elif spec.domain == "tabular":
        target = (
            "torch.bucketize(signal, torch.tensor([-1.0, 0.0, 1.0]))"
            if spec.classification
            else "(signal + 0.1 * torch.randn(n, generator=g)).unsqueeze(1)"
        )
        text = f'''
            class TabularDataset(Dataset):
                """Standardised numeric features and a target that depends on them non-linearly."""

                def __init__(self, n, seed=0, stats=None):
                    g = torch.Generator().manual_seed(seed)
                    x = torch.randn(n, NUM_FEATURES, generator=g) * 2.0 + 1.0
                    w = torch.randn(NUM_FEATURES, generator=torch.Generator().manual_seed(99))
                    signal = (x @ w) / NUM_FEATURES ** 0.5 + 0.5 * torch.sin(3.0 * x[:, 0])
                    self.mean, self.std = stats if stats is not None else (x.mean(0), x.std(0))
                    self.x = (x - self.mean) / self.std
                    self.y = {target}

                @property
                def stats(self):
                    return self.mean, self.std

                def __len__(self):
                    return self.x.shape[0]

                def __getitem__(self, index):
                    return self.x[index], self.y[index]
            '''
    elif spec.domain == "sequence":
        text = '''
            class WaveDataset(Dataset):
                """Multichannel sine waves; the class sets the frequency, noise is added."""

                def __init__(self, n, seed=0, noise=0.3):
                    g = torch.Generator().manual_seed(seed)
                    self.labels = torch.randint(0, NUM_CLASSES, (n,), generator=g)
                    t = torch.linspace(0.0, 2.0 * math.pi, SEQ_LEN)
                    freq = (self.labels.float() + 1.0).view(n, 1, 1)
                    phase = torch.rand(n, 1, NUM_CHANNELS, generator=g) * 2.0 * math.pi
                    self.series = torch.sin(freq * t.view(1, SEQ_LEN, 1) + phase)
                    self.series += noise * torch.randn(n, SEQ_LEN, NUM_CHANNELS, generator=g)

                def __len__(self):
                    return len(self.labels)

                def __getitem__(self, index):
                    return self.series[index], self.labels[index]
            '''
    else:
        text = '''
        class TopicDataset(Dataset):
            """Token sequences: a third of each document comes from its topic's vocabulary."""

            def __init__(self, n, seed=0):
                g = torch.Generator().manual_seed(seed)
                self.labels = torch.randint(0, NUM_CLASSES, (n,), generator=g)
                lengths = torch.randint(MAX_LEN // 2, MAX_LEN + 1, (n,), generator=g)
                self.tokens = torch.randint(1, VOCAB_SIZE, (n, MAX_LEN), generator=g)
                topic = torch.randint(0, 200, (n, MAX_LEN // 3), generator=g)
                self.tokens[:, : MAX_LEN // 3] = 1 + self.labels.view(n, 1) * 200 + topic
                positions = torch.arange(MAX_LEN).view(1, MAX_LEN)
                self.tokens[positions >= lengths.view(n, 1)] = PAD_ID

            def __len__(self):
                return len(self.labels)

            def __getitem__(self, index):
                return self.tokens[index], self.labels[index]
        '''
    return [*block(text), "", ""]


def model_section(rng: random.Random, spec: Spec) -> list[str]:
    out_dim = "NUM_CLASSES" if spec.classification else "1"
    arch = spec.arch
    if arch == "cnn":
        text = """
            class ConvBlock(nn.Module):
                def __init__(self, c_in, c_out):
                    super().__init__()
                    self.conv = nn.Conv2d(c_in, c_out, 3, padding=1, bias=False)
                    self.bn = nn.BatchNorm2d(c_out)

                def forward(self, x):
                    return F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)


            class SmallCNN(nn.Module):
                def __init__(self, num_classes=NUM_CLASSES, width=16, dropout=0.2):
                    super().__init__()
                    self.features = nn.Sequential(
                        ConvBlock(3, width),
                        ConvBlock(width, width * 2),
                        ConvBlock(width * 2, width * 4),
                    )
                    self.pool = nn.AdaptiveAvgPool2d(1)
                    self.dropout = nn.Dropout(dropout)
                    self.fc = nn.Linear(width * 4, num_classes)

                def forward(self, x):
                    x = self.pool(self.features(x)).flatten(1)
                    return self.fc(self.dropout(x))
            """
    elif arch == "resnet":
        text = '''
            class BasicBlock(nn.Module):
                def __init__(self, c_in, c_out, stride=1):
                    super().__init__()
                    self.conv1 = nn.Conv2d(c_in, c_out, 3, stride=stride, padding=1, bias=False)
                    self.bn1 = nn.BatchNorm2d(c_out)
                    self.conv2 = nn.Conv2d(c_out, c_out, 3, padding=1, bias=False)
                    self.bn2 = nn.BatchNorm2d(c_out)
                    self.shortcut = nn.Identity()
                    if stride != 1 or c_in != c_out:
                        self.shortcut = nn.Sequential(
                            nn.Conv2d(c_in, c_out, 1, stride=stride, bias=False),
                            nn.BatchNorm2d(c_out),
                        )

                def forward(self, x):
                    out = F.relu(self.bn1(self.conv1(x)))
                    out = self.bn2(self.conv2(out))
                    return F.relu(out + self.shortcut(x))


            class TinyResNet(nn.Module):
                """A ResNet-ish stack sized for 32x32 inputs."""

                def __init__(self, num_classes=NUM_CLASSES, width=16):
                    super().__init__()
                    self.stem = nn.Sequential(
                        nn.Conv2d(3, width, 3, padding=1, bias=False),
                        nn.BatchNorm2d(width),
                        nn.ReLU(inplace=True),
                    )
                    self.layer1 = BasicBlock(width, width)
                    self.layer2 = BasicBlock(width, width * 2, stride=2)
                    self.layer3 = BasicBlock(width * 2, width * 4, stride=2)
                    self.head = nn.Linear(width * 4, num_classes)

                def forward(self, x):
                    x = self.layer3(self.layer2(self.layer1(self.stem(x))))
                    return self.head(F.adaptive_avg_pool2d(x, 1).flatten(1))
            '''
    elif arch == "mlp":
        text = f"""
            class MLP(nn.Module):
                def __init__(self, in_features=NUM_FEATURES, hidden=64, out_features={out_dim},
                             depth=3, dropout=0.1):
                    super().__init__()
                    layers = []
                    width = in_features
                    for _ in range(depth):
                        layers += [nn.Linear(width, hidden), nn.ReLU(), nn.Dropout(dropout)]
                        width = hidden
                    self.body = nn.Sequential(*layers)
                    self.out = nn.Linear(width, out_features)

                def forward(self, x):
                    return self.out(self.body(x))
            """
    elif arch == "resmlp":
        text = f"""
            class ResidualLayer(nn.Module):
                def __init__(self, dim, dropout=0.1):
                    super().__init__()
                    self.norm = nn.LayerNorm(dim)
                    self.ff = nn.Sequential(
                        nn.Linear(dim, dim * 2), nn.GELU(), nn.Dropout(dropout),
                        nn.Linear(dim * 2, dim),
                    )

                def forward(self, x):
                    return x + self.ff(self.norm(x))


            class ResMLP(nn.Module):
                def __init__(self, in_features=NUM_FEATURES, hidden=64, out_features={out_dim},
                             depth=2):
                    super().__init__()
                    self.inp = nn.Linear(in_features, hidden)
                    self.layers = nn.ModuleList(ResidualLayer(hidden) for _ in range(depth))
                    self.out = nn.Linear(hidden, out_features)

                def forward(self, x):
                    x = self.inp(x)
                    for layer in self.layers:
                        x = layer(x)
                    return self.out(x)
            """
    elif arch == "lstm":
        text = """
            class LSTMClassifier(nn.Module):
                def __init__(self, hidden=64, num_layers=2, dropout=0.2):
                    super().__init__()
                    self.lstm = nn.LSTM(NUM_CHANNELS, hidden, num_layers=num_layers,
                                        batch_first=True, dropout=dropout)
                    self.head = nn.Sequential(nn.Dropout(dropout), nn.Linear(hidden, NUM_CLASSES))

                def forward(self, x):
                    output, _ = self.lstm(x)
                    return self.head(output[:, -1])
            """
    elif arch == "tcn":
        text = """
            class CausalConv(nn.Module):
                def __init__(self, c_in, c_out, kernel_size, dilation):
                    super().__init__()
                    self.pad = (kernel_size - 1) * dilation
                    self.conv = nn.Conv1d(c_in, c_out, kernel_size, dilation=dilation)

                def forward(self, x):
                    return self.conv(F.pad(x, (self.pad, 0)))


            class TemporalConvNet(nn.Module):
                def __init__(self, hidden=64, levels=3, kernel_size=3, dropout=0.1):
                    super().__init__()
                    blocks = []
                    channels = NUM_CHANNELS
                    for level in range(levels):
                        blocks += [CausalConv(channels, hidden, kernel_size, 2 ** level),
                                   nn.ReLU(), nn.Dropout(dropout)]
                        channels = hidden
                    self.net = nn.Sequential(*blocks)
                    self.head = nn.Linear(hidden, NUM_CLASSES)

                def forward(self, x):
                    features = self.net(x.transpose(1, 2))
                    return self.head(features.mean(dim=2))
            """
    elif arch == "bag":
        text = """
            class BagOfEmbeddings(nn.Module):
                def __init__(self, vocab_size=VOCAB_SIZE, dim=64, dropout=0.3):
                    super().__init__()
                    self.embedding = nn.Embedding(vocab_size, dim, padding_idx=PAD_ID)
                    self.dropout = nn.Dropout(dropout)
                    self.fc = nn.Linear(dim, NUM_CLASSES)

                def forward(self, tokens):
                    mask = (tokens != PAD_ID).unsqueeze(-1).float()
                    summed = (self.embedding(tokens) * mask).sum(1)
                    mean = summed / mask.sum(1).clamp(min=1.0)
                    return self.fc(self.dropout(mean))
            """
    elif arch == "transformer":
        text = """
            class TransformerClassifier(nn.Module):
                def __init__(self, vocab_size=VOCAB_SIZE, d_model=64, nhead=4, num_layers=2,
                             dropout=0.1):
                    super().__init__()
                    self.embed = nn.Embedding(vocab_size, d_model, padding_idx=PAD_ID)
                    self.pos = nn.Parameter(torch.zeros(1, MAX_LEN, d_model))
                    layer = nn.TransformerEncoderLayer(d_model, nhead, 4 * d_model, dropout,
                                                       batch_first=True)
                    self.encoder = nn.TransformerEncoder(layer, num_layers)
                    self.norm = nn.LayerNorm(d_model)
                    self.fc = nn.Linear(d_model, NUM_CLASSES)
                    nn.init.normal_(self.pos, std=0.02)

                def forward(self, tokens):
                    pad = tokens == PAD_ID
                    h = self.embed(tokens) + self.pos[:, : tokens.size(1)]
                    h = self.encoder(h, src_key_padding_mask=pad)
                    keep = (~pad).unsqueeze(-1).float()
                    pooled = (h * keep).sum(1) / keep.sum(1).clamp(min=1.0)
                    return self.fc(self.norm(pooled))
            """
    else:
        text = """
            class BiLSTMClassifier(nn.Module):
                def __init__(self, vocab_size=VOCAB_SIZE, dim=64, hidden=64, dropout=0.25):
                    super().__init__()
                    self.embedding = nn.Embedding(vocab_size, dim, padding_idx=PAD_ID)
                    self.lstm = nn.LSTM(dim, hidden, batch_first=True, bidirectional=True)
                    self.dropout = nn.Dropout(dropout)
                    self.fc = nn.Linear(2 * hidden, NUM_CLASSES)

                def forward(self, tokens):
                    output, _ = self.lstm(self.embedding(tokens))
                    pooled, _ = output.max(dim=1)
                    return self.fc(self.dropout(pooled))
            """
    return [*block(text), "", ""]


def model_constructor(spec: Spec) -> str:
    cfg = spec.names["cfg"]
    return {
        "cnn": "SmallCNN()",
        "resnet": "TinyResNet()",
        "mlp": f"MLP(hidden={cfg}.hidden)",
        "resmlp": f"ResMLP(hidden={cfg}.hidden)",
        "lstm": f"LSTMClassifier(hidden={cfg}.hidden)",
        "tcn": f"TemporalConvNet(hidden={cfg}.hidden)",
        "bag": "BagOfEmbeddings()",
        "transformer": "TransformerClassifier()",
        "bilstm": f"BiLSTMClassifier(hidden={cfg}.hidden)",
    }[spec.arch]


def dataset_constructor(spec: Spec, split: str) -> str:
    n = spec.names["cfg"] + (".n_train" if split == "train" else ".n_val")
    seed = spec.names["cfg"] + ".seed" + (" + 1" if split == "val" else "")
    if spec.domain == "image":
        augment = ", augment=True" if split == "train" else ""
        return f"SyntheticImages({n}, seed={seed}{augment})"
    if spec.domain == "tabular":
        stats = ", stats=train_set.stats" if split == "val" else ""
        return f"TabularDataset({n}, seed={seed}{stats})"
    if spec.domain == "sequence":
        return f"WaveDataset({n}, seed={seed})"
    return f"TopicDataset({n}, seed={seed})"


def criterion_expr(rng: random.Random, spec: Spec) -> str:
    if spec.classification:
        return rng.choice(("nn.CrossEntropyLoss()", "nn.CrossEntropyLoss(label_smoothing=0.1)"))
    return rng.choice(("nn.MSELoss()", "nn.SmoothL1Loss()", "nn.HuberLoss(delta=1.0)"))


# ---------------------------------------------------------------------------------------------
# The training step: built as ordered pieces, then smells move or drop pieces.


def autocast_line(spec: Spec, n: Mapping[str, str]) -> str:
    use_amp = n["use_amp"]
    if spec.amp == "bf16":
        return (
            f"with torch.autocast(device_type={n['device']}.type, dtype=torch.bfloat16, "
            f"enabled={use_amp}):"
        )
    if spec.amp == "fp16_legacy":
        name = "autocast" if spec.index % 2 == 0 else "torch.cuda.amp.autocast"
        return f"with {name}(enabled={use_amp}):"
    if spec.index % 3 == 0:
        return f'with torch.amp.autocast("cuda", enabled={use_amp}):'
    return f'with torch.autocast(device_type="cuda", dtype=torch.float16, enabled={use_amp}):'


def train_step(spec: Spec, n: Mapping[str, str], running: str) -> list[str]:
    """The body of the loop over batches (relative indentation 0)."""
    x, y, model, opt, loss, out = n["x"], n["y"], n["model"], n["opt"], n["loss"], n["out"]
    device, cfg, scaler, sched = n["device"], n["cfg"], n["scaler"], n["sched"]
    lines: list[str] = []
    if spec.batch_style == "batch":
        lines.append(f"{x}, {y} = batch")
    elif spec.batch_style == "list":
        nb = ", non_blocking=True" if spec.non_blocking and not spec.has("blocking_copy") else ""
        lines.append(f"{x}, {y} = [t.to({device}{nb}) for t in batch]")
    if spec.batch_style != "list":
        if spec.non_blocking and not spec.has("blocking_copy"):
            lines.append(f"{x} = {x}.to({device}, non_blocking=True)")
            lines.append(f"{y} = {y}.to({device}, non_blocking=True)")
        else:
            lines.append(f"{x}, {y} = {x}.to({device}), {y}.to({device})")
    if spec.has("cuda_sync"):
        lines += ["if torch.cuda.is_available():", "    torch.cuda.synchronize()"]
        lines.append("data_time = time.time() - end")

    zero = {
        "top": f"{opt}.zero_grad()",
        "after_step": f"{opt}.zero_grad()",
        "set_to_none": f"{opt}.zero_grad(set_to_none=True)",
        "model": f"{model}.zero_grad()",
    }[spec.zero_grad_style]
    zero_at_top = not spec.accum and spec.zero_grad_style != "after_step"

    forward = [f"{out} = {model}({x})"]
    target = f"F.softmax({out}, dim=1)" if spec.has("softmax_into_ce") else out
    forward.append(f"{loss} = {n['crit']}({target}, {y})")
    if spec.has("zeros_to_device"):
        forward += [
            f"l2 = torch.zeros(1).to({device})",
            f"for p in {model}.parameters():",
            "    l2 = l2 + p.pow(2).sum()",
            f"{loss} = {loss} + 1e-6 * l2",
        ]
    if spec.amp != "none":
        forward = [autocast_line(spec, n), *indent(forward, 1)]
    if spec.accum:
        forward.append(f"{loss} = {loss} / {cfg}.accum_steps")

    if spec.scaler and not spec.has("unscaled_backward"):
        backward = f"{scaler}.scale({loss}).backward()"
    else:
        backward = f"{loss}.backward()"

    update: list[str] = []
    if spec.clip:
        if spec.scaler and not spec.has("clip_no_unscale"):
            update.append(f"{scaler}.unscale_({opt})")
        update.append(f"torch.nn.utils.clip_grad_norm_({model}.parameters(), {cfg}.clip)")
    if spec.scaler and not spec.has("step_bypasses_scaler"):
        step = f"{scaler}.step({opt})"
    else:
        step = f"{opt}.step()"
    update.append(step)
    if spec.scaler and not spec.has("no_scaler_update"):
        update.append(f"{scaler}.update()")
    if spec.accum or spec.zero_grad_style == "after_step":
        update.append(zero)
    if "ema" in spec.helpers:
        update.append(f"ema.update({model})")
    if spec.scheduler == "batch":
        update.append(f"{sched}.step()")
    if spec.has("sched_before_step") and spec.scheduler == "batch":
        update.remove(f"{sched}.step()")
        update.insert(update.index(step), f"{sched}.step()")

    body: list[str] = []
    if zero_at_top:
        body.append(zero)
    body += forward
    body.append(backward)
    if spec.accum:
        body.append(f"if ({n['step']} + 1) % {cfg}.accum_steps == 0:")
        body += indent(update, 1)
    else:
        body += update
        if spec.has("no_zero_grad"):
            body.remove(zero)
        elif spec.has("zero_grad_late"):
            body.remove(zero)
            body.insert(body.index(step), zero)
        elif spec.has("step_first"):
            body.remove(step)
            body.insert(body.index(forward[0]), step)
        elif spec.has("no_step"):
            body.remove(step)
    lines += body

    if spec.has("cuda_sync"):
        lines += [
            "if torch.cuda.is_available():",
            "    torch.cuda.synchronize()",
            "batch_time = time.time() - end",
            "end = time.time()",
        ]
    if spec.has("loss_with_graph"):
        lines.append(f"{running} += {loss}")
    elif spec.has("item_every_step"):
        lines.append(f"{running} += {loss}.item()")
    elif "meter" in spec.helpers:
        lines.append(f"if {n['step']} % {cfg}.log_every == 0:")
        lines.append(f"    loss_meter.update({loss}.item(), {x}.size(0))")
    else:
        lines.append(f"{running} += {loss}.detach()")
    if spec.has("print_loss"):
        lines.append(
            f"print({loss})"
            if spec.index % 2
            else f'print(f"step {{{n["step"]}}} loss {{{loss}.item():.4f}}")'
        )
    lines.append(f"if {n['step']} % {cfg}.log_every == 0:")
    lines.append(
        f'    {n["log"]}(f"epoch {{{n["epoch"]}}} step {{{n["step"]}}}/{{len({n["loader"]})}} '
        f'loss {{{loss}.item():.4f}}")'
    )
    return lines


def batch_loop(spec: Spec, n: Mapping[str, str], running: str) -> list[str]:
    step, x, y, loader = n["step"], n["x"], n["y"], n["loader"]
    if spec.batch_style == "tuple":
        head = f"for {step}, ({x}, {y}) in enumerate({loader}):"
    else:
        head = f"for {step}, batch in enumerate({loader}):"
    lines = []
    if spec.has("cuda_sync"):
        lines.append("end = time.time()")
    if spec.accum:
        lines.append(f"{n['opt']}.zero_grad()")
    return [*lines, head, *indent(train_step(spec, n, running), 1)]


def running_init(spec: Spec, n: Mapping[str, str], running: str) -> list[str]:
    lines = [f"{running} = 0.0"]
    if "meter" in spec.helpers:
        lines.append('loss_meter = AverageMeter("loss")')
    return lines


def running_result(spec: Spec, n: Mapping[str, str], running: str) -> str:
    if "meter" in spec.helpers and not (spec.has("item_every_step") or spec.has("loss_with_graph")):
        return "loss_meter.avg"
    return f"float({running}) / len({n['loader']})"


def eval_body(spec: Spec, n: Mapping[str, str], loader: str, decorated: bool = False) -> list[str]:
    """Evaluation loop over `loader`, in a no-grad context unless the smell says otherwise."""
    x, y, model, out = n["x"], n["y"], n["model"], n["out"]
    inner = [f"for {x}, {y} in {loader}:"]
    inner.append(f"    {x}, {y} = {x}.to({n['device']}), {y}.to({n['device']})")
    inner.append(f"    {out} = {model}({x})")
    inner.append(f"    total_loss += {n['crit']}({out}, {y}).item() * {y}.size(0)")
    if spec.classification:
        inner.append(f"    correct += ({out}.argmax(dim=1) == {y}).sum().item()")
    inner.append(f"    count += {y}.size(0)")
    lines = [f"{model}.eval()", "total_loss, correct, count = 0.0, 0, 0"]
    if spec.has("eval_no_grad") or decorated:
        lines += inner
    else:
        ctx = "torch.inference_mode()" if spec.eval_style == "inference_mode" else "torch.no_grad()"
        lines += [f"with {ctx}:", *indent(inner, 1)]
    return lines


def eval_return(spec: Spec) -> str:
    if spec.classification:
        return "total_loss / count, correct / count"
    return "total_loss / count, -total_loss / count"


def epoch_tail(spec: Spec, n: Mapping[str, str], metric: str, state_prefix: str = "") -> list[str]:
    """After training and evaluating an epoch: scheduler, logging, checkpoint, early stop."""
    lines: list[str] = []
    sched, epoch, cfg = n["sched"], n["epoch"], n["cfg"]
    if spec.scheduler == "epoch":
        lines.append(f"{sched}.step()")
    elif spec.scheduler == "plateau":
        lines.append(f"{sched}.step(val_loss)")
    lines.append(
        f'{n["log"]}(f"epoch {{{epoch}}}: train loss {{train_loss:.4f}} '
        f'val loss {{val_loss:.4f}} val metric {{{metric}:.4f}}")'
    )
    best = f"{state_prefix}best_metric"
    lines.append(f"is_best = {best} is None or {metric} > {best}")
    lines.append("if is_best:")
    lines.append(f"    {state_prefix}best_metric = {metric}")
    if "checkpoint" in spec.helpers:
        lines += [
            "save_checkpoint(",
            "    {",
            f'        "epoch": {epoch},',
            f'        "model": {n["model"]}.state_dict(),',
            f'        "optimizer": {n["opt"]}.state_dict(),',
            f'        "best_metric": {state_prefix}best_metric,',
            "    },",
            "    is_best,",
            f"    {cfg}.output_dir,",
            ")",
        ]
    else:
        lines += [
            "if is_best:",
            f'    torch.save({n["model"]}.state_dict(), os.path.join({cfg}.output_dir, "best.pt"))',
        ]
    if "early_stopping" in spec.helpers:
        lines += [
            f"if stopper.step({metric}):",
            f'    {n["log"]}(f"early stopping after epoch {{{epoch}}}")',
            "    break",
        ]
    return lines


def sampler_lines(spec: Spec, n: Mapping[str, str], in_class: bool = False) -> list[str]:
    if not spec.distributed or spec.has("no_set_epoch"):
        return []
    if in_class:
        return [
            f"if isinstance({n['loader']}.sampler, DistributedSampler):",
            f"    {n['loader']}.sampler.set_epoch({n['epoch']})",
        ]
    return [
        "if train_sampler is not None:",
        f"    train_sampler.set_epoch({n['epoch']})",
    ]


# ---------------------------------------------------------------------------------------------
# Three shapes of training code


def flat_training(spec: Spec, n: Mapping[str, str]) -> list[str]:
    """Everything inline in `main()` (relative indentation 0, inside main)."""
    model, epoch, cfg = n["model"], n["epoch"], n["cfg"]
    lines = ["best_metric = None"]
    if "early_stopping" in spec.helpers:
        lines.append(f"stopper = EarlyStopping({cfg}.patience)")
    if spec.has("eval_leak"):
        lines.append(f"{model}.train()")
    lines.append(f"for {epoch} in range(start_epoch, {cfg}.epochs):")
    body = []
    if not spec.has("eval_leak"):
        body.append(f"{model}.train()")
    body += sampler_lines(spec, n)
    body += running_init(spec, n, "running_loss")
    body.append("epoch_start = time.time()")
    body += batch_loop(spec, n, "running_loss")
    body.append(f"train_loss = {running_result(spec, n, 'running_loss')}")
    body.append("")
    body += eval_body(spec, n, n["val_loader"])
    body.append(f"val_loss, val_metric = {eval_return(spec)}")
    if "timer" in spec.helpers:
        body.append(f'{n["log"]}(f"epoch time {{format_seconds(time.time() - epoch_start)}}")')
    body += epoch_tail(spec, n, "val_metric")
    return lines + indent(body, 1)


def helper_functions(spec: Spec, n: Mapping[str, str]) -> list[str]:
    """`train_one_epoch()` and `evaluate()` at module level."""
    model, opt, crit, loader, device = n["model"], n["opt"], n["crit"], n["loader"], n["device"]
    params = [model, loader, opt, crit, device, n["epoch"], n["cfg"]]
    if spec.scaler:
        params.append(n["scaler"])
    if spec.scheduler == "batch":
        params.append(n["sched"])
    if "ema" in spec.helpers:
        params.append("ema")
    lines = [f"def train_one_epoch({', '.join(params)}):"]
    body = []
    if spec.amp != "none":
        body.append(f"{n['use_amp']} = {n['cfg']}.amp and torch.cuda.is_available()")
    if not spec.has("eval_leak"):
        body.append(f"{model}.train()")
    body += running_init(spec, n, "running_loss")
    body += batch_loop(spec, n, "running_loss")
    body.append(f"return {running_result(spec, n, 'running_loss')}")
    lines += indent(body, 1)
    lines += ["", ""]
    if spec.eval_style == "decorator" and not spec.has("eval_no_grad"):
        lines.append("@torch.no_grad()")
    decorated = spec.eval_style == "decorator"
    lines.append(f"def evaluate({model}, data_loader, {crit}, {device}):")
    lines += indent(eval_body(spec, n, "data_loader", decorated), 1)
    lines.append(f"    return {eval_return(spec)}")
    return [*lines, "", ""]


def helper_training(spec: Spec, n: Mapping[str, str]) -> list[str]:
    """The epoch loop in `main()` that calls the helpers."""
    model, cfg, epoch = n["model"], n["cfg"], n["epoch"]
    args = [model, n["loader"], n["opt"], n["crit"], n["device"], epoch, cfg]
    if spec.scaler:
        args.append(n["scaler"])
    if spec.scheduler == "batch":
        args.append(n["sched"])
    if "ema" in spec.helpers:
        args.append("ema")
    lines = ["best_metric = None"]
    if "early_stopping" in spec.helpers:
        lines.append(f"stopper = EarlyStopping({cfg}.patience)")
    if spec.has("eval_leak"):
        lines.append(f"{model}.train()")
    lines.append(f"for {epoch} in range(start_epoch, {cfg}.epochs):")
    body = sampler_lines(spec, n)
    body.append("epoch_start = time.time()")
    body.append(f"train_loss = train_one_epoch({', '.join(args)})")
    body.append(
        f"val_loss, val_metric = evaluate({model}, {n['val_loader']}, {n['crit']}, {n['device']})"
    )
    if "timer" in spec.helpers:
        body.append(f'{n["log"]}(f"epoch time {{format_seconds(time.time() - epoch_start)}}")')
    body += epoch_tail(spec, n, "val_metric")
    return lines + indent(body, 1)


def trainer_names(n: Mapping[str, str]) -> dict[str, str]:
    names = dict(n)
    for key in ("model", "opt", "loader", "val_loader", "crit", "sched", "scaler", "device"):
        names[key] = "self." + n[key]
    names["cfg"] = "self.cfg"
    names["use_amp"] = "self.use_amp"
    return names


def trainer_class(spec: Spec, n: Mapping[str, str]) -> list[str]:
    t = trainer_names(n)
    init_params = ["self", n["model"], n["loader"], n["val_loader"], n["opt"], n["crit"]]
    init_params += [n["device"], n["cfg"]]
    if spec.scheduler != "none":
        init_params.append(f"{n['sched']}=None")
    if spec.scaler:
        init_params.append(f"{n['scaler']}=None")
    lines = ["class Trainer:", '    """Owns the model, the optimizer and the data; runs epochs."""']
    lines.append("")
    init = [f"def __init__({', '.join(init_params)}):"]
    for key in ("model", "loader", "val_loader", "opt", "crit", "device"):
        init.append(f"    {t[key]} = {n[key]}")
    init.append(f"    self.cfg = {n['cfg']}")
    if spec.scheduler != "none":
        init.append(f"    {t['sched']} = {n['sched']}")
    if spec.amp != "none":
        init.append(f"    self.use_amp = {n['cfg']}.amp and torch.cuda.is_available()")
    if spec.scaler:
        init.append(f"    {t['scaler']} = {n['scaler']}")
    if "ema" in spec.helpers:
        init.append(f"    self.ema = ModelEMA({n['model']})")
    init.append("    self.best_metric = None")
    init.append("    self.history = []")
    lines += [*indent(init, 1), ""]

    train = [f"def train_epoch(self, {n['epoch']}):"]
    body = []
    if not spec.has("eval_leak"):
        body.append(f"{t['model']}.train()")
    body += running_init(spec, t, "running_loss")
    step_names = dict(t)
    if "ema" in spec.helpers:
        body.append("ema = self.ema")
    body += batch_loop(spec, step_names, "running_loss")
    body.append(f"return {running_result(spec, t, 'running_loss')}")
    train += indent(body, 1)
    lines += [*indent(train, 1), ""]

    if spec.eval_style == "decorator" and not spec.has("eval_no_grad"):
        lines.append("    @torch.no_grad()")
    evaluate = ["def evaluate(self):"]
    decorated = spec.eval_style == "decorator"
    evaluate += indent(eval_body(spec, t, t["val_loader"], decorated), 1)
    evaluate.append(f"    return {eval_return(spec)}")
    lines += [*indent(evaluate, 1), ""]

    fit = ["def fit(self, start_epoch=0):"]
    fbody = []
    if "early_stopping" in spec.helpers:
        fbody.append(f"stopper = EarlyStopping({t['cfg']}.patience)")
    if spec.has("eval_leak"):
        fbody.append(f"{t['model']}.train()")
    fbody.append(f"for {n['epoch']} in range(start_epoch, {t['cfg']}.epochs):")
    loop = sampler_lines(spec, t, in_class=True)
    loop.append(f"train_loss = self.train_epoch({n['epoch']})")
    loop.append("val_loss, val_metric = self.evaluate()")
    loop.append("self.history.append((train_loss, val_loss, val_metric))")
    loop += epoch_tail(spec, t, "val_metric", state_prefix="self.")
    fbody += indent(loop, 1)
    fbody.append("return self.best_metric")
    fit += indent(fbody, 1)
    lines += indent(fit, 1)
    return [*lines, "", ""]


# ---------------------------------------------------------------------------------------------
# main()


def optimizer_lines(spec: Spec, n: Mapping[str, str]) -> list[str]:
    model, opt, cfg = n["model"], n["opt"], n["cfg"]
    if spec.optimizer == "SGD":
        return [
            f"{opt} = torch.optim.SGD(",
            f"    {model}.parameters(), lr={cfg}.lr, momentum=0.9, weight_decay={cfg}.weight_decay",
            ")",
        ]
    if spec.optimizer == "AdamW" and spec.index % 2 == 0:
        return [
            "decay, no_decay = [], []",
            f"for name, param in {model}.named_parameters():",
            "    if not param.requires_grad:",
            "        continue",
            '    (no_decay if param.ndim <= 1 or name.endswith(".bias") else decay).append(param)',
            f"{opt} = torch.optim.AdamW(",
            "    [",
            f'        {{"params": decay, "weight_decay": {cfg}.weight_decay}},',
            '        {"params": no_decay, "weight_decay": 0.0},',
            "    ],",
            f"    lr={cfg}.lr,",
            ")",
        ]
    return [
        f"{opt} = torch.optim.{spec.optimizer}({model}.parameters(), lr={cfg}.lr, "
        f"weight_decay={cfg}.weight_decay)"
    ]


def scheduler_lines(spec: Spec, n: Mapping[str, str]) -> list[str]:
    sched, opt, cfg, loader = n["sched"], n["opt"], n["cfg"], n["loader"]
    kind = spec.sched_kind
    if spec.scheduler == "none":
        return []
    lrs = "torch.optim.lr_scheduler"
    steps = f"{cfg}.epochs * len({loader})"
    if spec.accum:
        steps = f"{cfg}.epochs * math.ceil(len({loader}) / {cfg}.accum_steps)"
    expr = {
        "StepLR": f"torch.optim.lr_scheduler.StepLR({opt}, step_size=10, gamma=0.5)",
        "CosineAnnealingLR": f"{lrs}.CosineAnnealingLR({opt}, T_max={cfg}.epochs)",
        "MultiStepLR": f"{lrs}.MultiStepLR({opt}, milestones=[30, 60], gamma=0.1)",
        "ExponentialLR": f"torch.optim.lr_scheduler.ExponentialLR({opt}, gamma=0.95)",
        "OneCycleLR": f"{lrs}.OneCycleLR({opt}, max_lr={cfg}.lr, total_steps=total_steps)",
        "LambdaLR": (
            f"torch.optim.lr_scheduler.LambdaLR({opt}, "
            f"warmup_cosine({cfg}.warmup_steps, total_steps))"
        ),
        "ReduceLROnPlateau": (
            f'torch.optim.lr_scheduler.ReduceLROnPlateau({opt}, mode="min", factor=0.5, patience=2)'
        ),
    }[kind]
    lines = [f"total_steps = {steps}"] if spec.scheduler == "batch" else []
    return [*lines, f"{sched} = {expr}"]


def scaler_lines(spec: Spec, n: Mapping[str, str]) -> list[str]:
    lines = [f"{n['use_amp']} = {n['cfg']}.amp and torch.cuda.is_available()"]
    if not spec.scaler:
        return lines if spec.amp != "none" else []
    if spec.amp == "fp16_legacy":
        name = "GradScaler" if spec.index % 2 == 0 else "torch.cuda.amp.GradScaler"
        lines.append(f"{n['scaler']} = {name}(enabled={n['use_amp']})")
    else:
        lines.append(f'{n["scaler"]} = torch.amp.GradScaler("cuda", enabled={n["use_amp"]})')
    return lines


def loader_lines(spec: Spec, n: Mapping[str, str]) -> list[str]:
    cfg = n["cfg"]
    lines = [
        f"train_set = {dataset_constructor(spec, 'train')}",
        f"val_set = {dataset_constructor(spec, 'val')}",
    ]
    workers = "0" if spec.has("workers_zero") else f"{cfg}.num_workers"
    pin = "True" if spec.has("blocking_copy") else "torch.cuda.is_available()"
    if spec.distributed:
        lines += [
            "train_sampler = DistributedSampler(train_set) if dist.is_initialized() else None",
        ]
        shuffle = "False" if spec.has("no_shuffle") else "train_sampler is None"
        sampler = ", sampler=train_sampler"
    else:
        shuffle = "False" if spec.has("no_shuffle") else "True"
        sampler = ""
    shuffle_arg = "" if spec.has("no_shuffle") and spec.index % 2 else f", shuffle={shuffle}"
    lines += [
        f"{n['loader']} = DataLoader(",
        f"    train_set, batch_size={cfg}.batch_size{shuffle_arg}{sampler},",
        f"    num_workers={workers}, pin_memory={pin}, drop_last=True,",
        ")",
        f"{n['val_loader']} = DataLoader(val_set, batch_size={cfg}.batch_size * 2, "
        f"num_workers={workers})",
    ]
    return lines


def main_function(rng: random.Random, spec: Spec) -> list[str]:
    n = spec.names
    model, cfg, device = n["model"], n["cfg"], n["device"]
    body = [f"{cfg} = parse_args()" if spec.config == "argparse" else f"{cfg} = Config()"]
    if spec.logger:
        body.append(f"setup_logging({cfg}.output_dir)")
    else:
        body.append(f"os.makedirs({cfg}.output_dir, exist_ok=True)")
    if "save_config" in spec.helpers:
        body.append(f"save_config({cfg}, {cfg}.output_dir)")
    body.append(f"set_seed({cfg}.seed)")
    if spec.distributed:
        body += [
            'if "LOCAL_RANK" in os.environ:',
            '    dist.init_process_group(backend="nccl")',
            '    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))',
            f'    {device} = torch.device("cuda", int(os.environ["LOCAL_RANK"]))',
            "else:",
            f'    {device} = torch.device("cuda" if torch.cuda.is_available() else "cpu")',
        ]
    else:
        body.append(f'{device} = torch.device("cuda" if torch.cuda.is_available() else "cpu")')
    body.append("")
    body += loader_lines(spec, n)
    body.append("")
    body.append(f"{model} = {model_constructor(spec)}.to({device})")
    if spec.distributed:
        body += [
            "if dist.is_initialized():",
            f"    {model} = nn.parallel.DistributedDataParallel(",
            f"        {model}, device_ids=[{device}.index]",
            "    )",
        ]
    if "count_params" in spec.helpers:
        body.append(f'{n["log"]}(f"trainable parameters: {{count_parameters({model}):,}}")')
    body.append(f"{n['crit']} = {criterion_expr(rng, spec)}")
    body += optimizer_lines(spec, n)
    body += scheduler_lines(spec, n)
    body += scaler_lines(spec, n)
    if "ema" in spec.helpers and spec.structure != "trainer":
        body.append(f"ema = ModelEMA({model})")
    body.append("start_epoch = 0")
    if "checkpoint" in spec.helpers:
        resume = f'os.path.join({cfg}.output_dir, "checkpoint.pt")'
        body += [
            f"if os.path.exists({resume}):",
            f"    start_epoch, _ = load_checkpoint({resume}, {model}, {n['opt']})",
            f'    {n["log"]}(f"resumed from epoch {{start_epoch}}")',
        ]
    body.append("")
    if spec.structure == "flat":
        body += flat_training(spec, n)
    elif spec.structure == "helpers":
        body += helper_training(spec, n)
    else:
        args = [model, n["loader"], n["val_loader"], n["opt"], n["crit"], device, cfg]
        if spec.scheduler != "none":
            args.append(f"{n['sched']}={n['sched']}")
        if spec.scaler:
            args.append(f"{n['scaler']}={n['scaler']}")
        body.append(f"trainer = Trainer({', '.join(args)})")
        body.append("best_metric = trainer.fit(start_epoch)")
    body.append(f'{n["log"]}(f"best validation metric: {{best_metric}}")')
    if "predict" in spec.helpers:
        body += [
            "sample = torch.stack([val_set[i][0] for i in range(8)])",
            f"predictions = predict({model}, sample, {device})",
            f'{n["log"]}(f"predictions for 8 validation samples: {{predictions.tolist()}}")',
        ]
    if "confusion" in spec.helpers and spec.classification:
        body += [
            f"matrix = confusion_matrix({model}, {n['val_loader']}, {device})",
            f"{n['log']}(per_class_report(matrix))",
        ]
    if spec.distributed:
        body += ["if dist.is_initialized():", "    dist.destroy_process_group()"]
    lines = ["def main():", *indent(body, 1), "", ""]
    lines += ['if __name__ == "__main__":', "    main()"]
    return lines


# ---------------------------------------------------------------------------------------------


def render(spec: Spec, rng: random.Random) -> str:
    lines: list[str] = []
    lines += header(rng, spec)
    lines += imports(spec)
    lines += constants(spec)
    lines += config_section(spec)
    lines += utilities(rng, spec)
    lines += dataset_section(rng, spec)
    lines += model_section(rng, spec)
    if spec.structure == "helpers":
        lines += helper_functions(spec, spec.names)
    elif spec.structure == "trainer":
        lines += trainer_class(spec, spec.names)
    lines += main_function(rng, spec)
    text = "\n".join(lines)
    while "\n\n\n\n" in text:
        text = text.replace("\n\n\n\n", "\n\n\n")
    return text.rstrip("\n") + "\n"


def file_name(spec: Spec) -> str:
    return f"train_{spec.index:03d}_{spec.domain}_{spec.arch}_{spec.structure}.py"


def generate(out_dir: Path, count: int = DEFAULT_COUNT, seed: int = DEFAULT_SEED) -> list[Path]:
    """Write `count` training scripts into `out_dir` and return their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for index in range(count):
        rng = random.Random(f"{seed}:{index}")
        spec = choose_spec(rng, index)
        path = out_dir / file_name(spec)
        path.write_text(render(spec, rng), encoding="utf-8")
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path, help="folder to write the scripts into")
    parser.add_argument("--count", type=int, default=DEFAULT_COUNT, help="number of files")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="corpus seed")
    args = parser.parse_args(argv)
    paths = generate(args.out_dir, args.count, args.seed)
    lines = sum(p.read_text(encoding="utf-8").count("\n") for p in paths)
    print(f"wrote {len(paths)} files, {lines} lines, into {args.out_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

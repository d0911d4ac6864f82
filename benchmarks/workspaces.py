"""Workspaces for the runtime benchmarks: public scripts fetched at pinned commits, the data they
need (made here, never downloaded), and the hashes that show a run changed none of the files.

Shared by benchmarks/isolation/run.py and benchmarks/real_scripts/run.py. Nothing fetched is
committed: the scripts are read from bare git mirrors (the search tool's `fetch` puts them under
/work/.mirror) into an ignored cache folder.
"""

from __future__ import annotations

import hashlib
import pickle
import random
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MIRRORS = Path("/work/.mirror")


def fetch(entry: dict[str, Any], mirror_root: Path, cache: Path) -> Path:
    """The script's files at its commit, extracted from a bare mirror into `cache` (kept)."""
    target = cache / entry["repo"].replace("/", "+") / entry["commit"] / entry["folder"]
    if all((target / name).exists() for name in entry["files"]):
        return target
    git_dir = mirror_root / entry["repo"].replace("/", "+") / "repo"
    for name in entry["files"]:
        path = f"{entry['folder']}/{name}" if entry["folder"] else name
        blob = subprocess.run(
            ["git", f"--git-dir={git_dir}", "show", f"{entry['commit']}:{path}"],
            capture_output=True,
            check=True,
        ).stdout
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (target / name).write_bytes(blob)
    return target


def hashes(folder: Path) -> dict[str, str]:
    """Every file (content hash) and folder under `folder`, by relative path."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if "__pycache__" in path.parts:
            continue
        if path.is_file():
            found[str(path.relative_to(folder))] = hashlib.sha256(path.read_bytes()).hexdigest()
        elif path.is_dir():
            found[str(path.relative_to(folder))] = "dir"
    return found


def changes(before: dict[str, str], after: dict[str, str]) -> dict[str, list[str]]:
    return {
        "changed": [p for p in before if p in after and before[p] != after[p]],
        "created": [p for p in after if p not in before],
        "removed": [p for p in before if p not in after],
    }


# ----------------------------------------------------------------------------------------------
# data made here (learnable: a Markov chain of words or characters, so a correct script's
# losses fall)


def _markov_words(rng: random.Random, count: int, vocabulary: int = 60) -> list[str]:
    words = [f"w{i}" for i in range(vocabulary)]
    following = {w: rng.sample(words, 3) for w in words}
    current = words[0]
    out = []
    for _ in range(count):
        out.append(current)
        current = rng.choice(following[current]) if rng.random() < 0.9 else rng.choice(words)
    return out


def _lines(words: list[str], per_line: int) -> str:
    return "\n".join(" ".join(words[i : i + per_line]) for i in range(0, len(words), per_line))


def make_text_corpus(workspace: Path) -> None:
    """word_language_model: data/wikitext-2/{train,valid,test}.txt."""
    rng = random.Random(0)
    folder = workspace / "data" / "wikitext-2"
    folder.mkdir(parents=True)
    for split, count in (("train", 3600), ("valid", 720), ("test", 720)):
        (folder / f"{split}.txt").write_text(_lines(_markov_words(rng, count), 12) + "\n")


def make_wikitext_single(workspace: Path) -> None:
    """Lightning's demo WikiText2: data/wikitext-2.txt (more than 4,000 blocks of 35 tokens)."""
    rng = random.Random(1)
    folder = workspace / "data"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "wikitext-2.txt").write_text(_lines(_markov_words(rng, 190_000), 15) + "\n")


def make_token_memmap(workspace: Path) -> None:
    """nanoGPT: data/shakespeare_char/{train,val}.bin and meta.pkl."""
    import numpy as np

    folder = workspace / "data" / "shakespeare_char"
    folder.mkdir(parents=True)
    rng = random.Random(2)
    tokens = [int(w[1:]) % 32 for w in _markov_words(rng, 24_000, vocabulary=32)]
    split = int(len(tokens) * 0.9)
    np.array(tokens[:split], dtype=np.uint16).tofile(folder / "train.bin")
    np.array(tokens[split:], dtype=np.uint16).tofile(folder / "val.bin")
    meta = {"vocab_size": 32, "itos": {i: chr(65 + i) for i in range(32)}}
    (folder / "meta.pkl").write_bytes(pickle.dumps(meta))


def make_char_text(workspace: Path) -> None:
    """ng-video-lecture: input.txt."""
    rng = random.Random(3)
    (workspace / "input.txt").write_text(_lines(_markov_words(rng, 12_000, vocabulary=40), 10))


def make_names(workspace: Path) -> None:
    """makemore: names.txt, one made-up name per line."""
    rng = random.Random(4)
    syllables = ["ka", "ri", "lo", "ma", "ne", "sa", "to", "vi", "el", "an", "jo", "dy"]
    names = {"".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(3000)}
    (workspace / "names.txt").write_text("\n".join(sorted(names)) + "\n")


def make_sine_waves(workspace: Path) -> None:
    """time_sequence_prediction: traindata.pt, as its generate_sine_wave.py makes it, smaller."""
    import numpy as np
    import torch

    generator = np.random.default_rng(2)
    period, length, count = 20, 200, 24
    x = np.empty((count, length), "int64")
    x[:] = np.array(range(length)) + generator.integers(-4 * period, 4 * period, count).reshape(
        count, 1
    )
    data = np.sin(x / 1.0 / period).astype("float64")
    torch.save(data, workspace / "traindata.pt")


DATA: dict[str, Callable[[Path], None] | None] = {
    "text_corpus": make_text_corpus,
    "wikitext_single": make_wikitext_single,
    "token_memmap": make_token_memmap,
    "char_text": make_char_text,
    "names": make_names,
    "sine_waves": make_sine_waves,
    "none": None,
}


def make_workspace(entry: dict[str, Any], source: Path, root: Path) -> Path:
    """A project folder with the script's files, its data, and what an earlier real run left
    (the checkpoints and logs it writes), plus notes of the user's."""
    workspace = root / entry["name"]
    workspace.mkdir(parents=True)
    for name in entry["files"]:
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source / name, workspace / name)
    maker = DATA[entry["data"]]
    if maker is not None:
        maker(workspace)
    for relative in entry.get("user_files", []):
        path = workspace / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(f"an earlier run's {relative}\n".encode() * 64)
    (workspace / "runs").mkdir(exist_ok=True)
    (workspace / "runs" / "notes.txt").write_text("my experiment notes\n")
    return workspace

"""A training script that writes with every kind of writer at its third step, then reads each
back as a script that saves and reloads would. It runs from a workspace with the user's own
files (tests/workspace_guard.py): model.pt, checkpoint.pt, best.pt, data/, runs/, checkpoints/,
lightning_logs/, notes.txt. Each writer's outcome ("ok" or the error) goes to writers.json,
which the run writes like any other file (the test reads it from --keep-outputs)."""

import csv
import json
import os
import shutil
import subprocess
import sys
import traceback
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.tensorboard import SummaryWriter

torch.manual_seed(0)
loader = DataLoader(TensorDataset(torch.randn(64, 4), torch.randint(0, 2, (64,))), batch_size=8)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def same_weights(a, b):
    return all(torch.equal(a[k], b[k]) for k in a)


def torch_save_path():
    torch.save(model.state_dict(), "model.pt")  # over the user's earlier checkpoint
    assert same_weights(torch.load("model.pt"), model.state_dict())


def torch_save_file_object():
    with open("checkpoint.pt", "wb") as stream:  # the script opens the file itself
        torch.save(model, stream)
    loaded = torch.load("checkpoint.pt", weights_only=False)
    assert same_weights(loaded.state_dict(), model.state_dict())
    assert not loaded._forward_pre_hooks and not loaded._forward_hooks


def open_modes():
    with open("notes.txt", "w") as f:
        f.write("rewritten by the run\n")
    with open("data/train.csv", "a") as f:
        f.write("0.5,0.5,1\n")
    with open("best.pt", "r+b") as f:
        f.write(b"XX")
    with open("fresh.txt", "x") as f:
        f.write("new\n")
    try:
        open("notes.txt", "x")
        raise AssertionError("mode x opened an existing file")
    except FileExistsError:
        pass
    assert open("notes.txt").read() == "rewritten by the run\n"
    assert open("data/train.csv").read().endswith("0.3,0.1,1\n0.5,0.5,1\n")
    assert open("best.pt", "rb").read().startswith(b"XXe user's best model")
    assert open("fresh.txt").read() == "new\n"


def pathlib_writes():
    Path("runs/exp1/summary.txt").write_text("summary\n")
    Path("out/deep").mkdir(parents=True)
    (Path("out/deep") / "x.bin").write_bytes(b"\x00\x01")
    Path("notes.txt").touch()
    assert Path("runs/exp1/summary.txt").read_text() == "summary\n"
    assert sorted(p.name for p in Path("out").rglob("*")) == ["deep", "x.bin"]
    assert "summary.txt" in os.listdir("runs/exp1")


def moves_and_deletions():
    os.replace("best.pt", "best_old.pt")
    os.rename("fresh.txt", "fresh_renamed.txt")
    os.remove("checkpoints/last.ckpt")
    os.makedirs("archive", exist_ok=True)
    shutil.move("data/features.npy", "archive/features.npy")
    shutil.copy("archive/features.npy", "archive/copy.npy")
    shutil.rmtree("lightning_logs")
    os.mkdir("empty")
    os.rmdir("empty")
    assert not os.path.exists("best.pt") and os.path.getsize("best_old.pt") > 100
    assert not os.path.exists("fresh.txt") and os.path.exists("fresh_renamed.txt")
    assert os.listdir("checkpoints") == [] and not os.path.exists("lightning_logs")
    assert sorted(os.listdir("archive")) == ["copy.npy", "features.npy"]
    assert not os.path.exists("data/features.npy") and not os.path.exists("empty")


def numpy_save():
    array = np.arange(12).reshape(3, 4)
    np.save("data/features", array)  # data/features.npy: the user's file was moved away above
    np.savez("arrays.npz", a=array)
    assert (np.load("data/features.npy") == array).all()
    assert (np.load("arrays.npz")["a"] == array).all()


def tensorboard_writer():
    writer = SummaryWriter("runs/exp1")  # the user's existing log folder
    for step in range(3):
        writer.add_scalar("loss", 1.0 / (step + 1), step)
    writer.close()
    events = [n for n in os.listdir("runs/exp1") if n.startswith("events.out.tfevents")]
    assert len(events) == 2, events  # the user's and the run's


def csv_logger():
    with open("metrics.csv", "w", newline="") as f:
        csv.writer(f).writerows([["step", "loss"], [1, 0.5]])
    with open("metrics.csv", newline="") as f:
        assert list(csv.reader(f)) == [["step", "loss"], ["1", "0.5"]]


def python_subprocess():
    code = "open('notes.txt', 'a').write('from a child process\\n')"
    subprocess.run([sys.executable, "-c", code], check=True)
    assert open("notes.txt").read().endswith("from a child process\n")


WRITERS = [
    torch_save_path,
    torch_save_file_object,
    open_modes,
    pathlib_writes,
    moves_and_deletions,
    numpy_save,
    tensorboard_writer,
    csv_logger,
    python_subprocess,
]


def exercise_writers():
    results = {}
    for writer in WRITERS:
        try:
            writer()
            results[writer.__name__] = "ok"
        except Exception:
            results[writer.__name__] = traceback.format_exc()
    Path("writers.json").write_text(json.dumps(results, indent=1))


step = 0
for epoch in range(50):
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
        step += 1
        if step == 3:
            exercise_writers()

"""What does `torchlint run` cost on top of the user's own loop, and how much of the step does the
stage profiler account for?

Writes one training script that timestamps every optimizer step into a file, then runs it
(a) plainly with `python script.py`, (b) under `torchlint run grads` and (c) under
`torchlint run overfit`, alternating the three several times. Reports the median step time of
each (warm-up steps dropped) and the ratios to the plain run, plus the whole-command wall time
(process start, torch import, capture) of each.

    .venv/bin/python benchmarks/bench_runtime.py [--steps 60] [--rounds 3] [--width 512] [--json]

Not a test: prints and exits 0. The step-time ratio is the number that matters; wall times
include one extra interpreter (the child) and are dominated by `import torch`.

Then `torchlint run profile` runs on the same script: its own measured step (with per-stage
timing) against its uninstrumented window gives the profiler's overhead ratio, and the sum of
the stage medians against the median step gives how much of the step the stages account for.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe, package_version

SCRIPT = """
import os, time, torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
torch.set_num_threads(1)
WIDTH = {width}
data = TensorDataset(torch.randn(4096, WIDTH), torch.randint(0, 10, (4096,)))
loader = DataLoader(data, batch_size=64, shuffle=True)
layers = []
for _ in range({depth}):
    layers += [nn.Linear(WIDTH, WIDTH), nn.ReLU()]
model = nn.Sequential(*layers, nn.Linear(WIDTH, 10))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()
marks = open(os.environ["BENCH_MARKS"], "a", buffering=1)
step = 0
steps = int(os.environ.get("BENCH_STEPS", {steps}))
while step < steps:
    for x, y in loader:
        optimizer.zero_grad(set_to_none=True)
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        step += 1
        marks.write(f"{{time.perf_counter()}}\\n")
        if step >= steps:
            break
"""


def step_times(marks: Path, warmup: int) -> list[float]:
    stamps = [float(line) for line in marks.read_text().split()]
    return [b - a for a, b in itertools.pairwise(stamps)][warmup:]


def run_once(kind: str, script: Path, steps: int, scratch: Path) -> tuple[float, float]:
    marks = scratch / f"marks-{kind}.txt"
    marks.unlink(missing_ok=True)
    env = dict(os.environ, BENCH_MARKS=str(marks))
    # a run writes into its own scratch folder: the marks come back through --keep-outputs
    kept = scratch / f"kept-{kind}"
    shutil.rmtree(kept, ignore_errors=True)
    if kind == "plain":
        command = [sys.executable, str(script)]
    else:
        command = [
            sys.executable,
            "-m",
            "torchlint",
            "run",
            kind,
            str(script),
            "--steps",
            str(steps),
            "--output-format",
            "json",
            "--keep-outputs",
            str(kept),
        ]
    started = time.perf_counter()
    done = subprocess.run(
        command, env=env, capture_output=True, text=True, check=False, cwd=scratch
    )
    wall = time.perf_counter() - started
    if kind != "plain":
        status = json.loads(done.stdout)["status"]
        if status != "completed":
            raise SystemExit(f"{kind}: {status}\n{done.stdout[-2000:]}")
        marks = kept / marks.name
    times = step_times(marks, warmup=5)
    return statistics.median(times), wall


def profile_run(script: Path, steps: int, scratch: Path) -> dict[str, Any]:
    # the profile stops the script itself, after its warm-up and two windows
    env = dict(os.environ, BENCH_MARKS=str(scratch / "marks-profile.txt"), BENCH_STEPS="1000000")
    command = [sys.executable, "-m", "torchlint", "run", "profile", str(script)]
    command += ["--steps", str(steps), "--output-format", "json"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    result = json.loads(done.stdout)
    if result["status"] != "completed":
        raise SystemExit(f"profile: {result['status']}\n{done.stdout[-2000:]}")
    payload: dict[str, Any] = result["payload"]
    return payload


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    load_before = os.getloadavg()
    kinds = ("plain", "grads", "overfit")
    medians: dict[str, list[float]] = {k: [] for k in kinds}
    walls: dict[str, list[float]] = {k: [] for k in kinds}
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        script = scratch / "train.py"
        script.write_text(SCRIPT.format(width=args.width, depth=args.depth, steps=args.steps))
        for _ in range(args.rounds):
            for kind in kinds:
                median, wall = run_once(kind, script, args.steps, scratch)
                medians[kind].append(median)
                walls[kind].append(wall)
        profiles = [profile_run(script, args.steps, scratch) for _ in range(args.rounds)]
    plain = statistics.median(medians["plain"])
    result: dict[str, Any] = {
        "machine": describe(load_before=load_before),
        "torch": package_version("torch"),
        "model": f"MLP {args.depth}x{args.width}, batch 64, AdamW, 1 thread",
        "steps": args.steps,
        "rounds": args.rounds,
        "step_ms": {k: round(statistics.median(v) * 1e3, 3) for k, v in medians.items()},
        "step_ratio": {
            k: round(statistics.median(v) / plain, 3) for k, v in medians.items() if k != "plain"
        },
        "wall_s": {k: round(statistics.median(v), 2) for k, v in walls.items()},
        "profile": {
            "step_ms": statistics.median(p["step_ms"]["median"] for p in profiles),
            "uninstrumented_ms": statistics.median(
                p["step_ms"]["uninstrumented_median"] for p in profiles
            ),
            "overhead_ratio": statistics.median(p["instrumentation_overhead"] for p in profiles),
            "coverage": statistics.median(p["coverage"] for p in profiles),
        },
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{result['model']}; {args.steps} steps x {args.rounds} rounds; {result['machine']}")
    for kind in kinds:
        ratio = result["step_ratio"].get(kind)
        extra = f"  ({ratio:.3f}x plain)" if ratio is not None else ""
        print(
            f"{kind:8s} median step {result['step_ms'][kind]:8.3f} ms{extra}"
            f"   whole command {result['wall_s'][kind]:.2f} s"
        )
    profile = result["profile"]
    print(
        f"profile  step {profile['step_ms']:.3f} ms with per-stage timing, "
        f"{profile['uninstrumented_ms']:.3f} ms without: overhead {profile['overhead_ratio']:.3f}x;"
        f" the stages account for {profile['coverage'] * 100:.1f}% of the median step"
    )


if __name__ == "__main__":
    main()

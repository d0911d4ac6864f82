"""The child imports the user's packages from the user's interpreter, never torchlint's.

torchlint installed in one environment (here: a copy of the package in a folder beside another
package, `shadowed`, as a site-packages holds it) runs a script with another interpreter (a
virtual environment with its own `shadowed`, of another version). The script must see the
version of its own interpreter: only torchlint itself may come from torchlint's environment.
"""

from __future__ import annotations

import json
import shutil
import site
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """\
import shadowed
import torch

assert shadowed.ORIGIN == "user", f"the script imported {shadowed.ORIGIN}'s shadowed"
model = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 3), torch.randn(16, 1)
for step in range(20):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
"""


def _package(folder: Path, origin: str) -> None:
    (folder / "shadowed").mkdir(parents=True)
    (folder / "shadowed" / "__init__.py").write_text(f"ORIGIN = {origin!r}\n")


def test_the_scripts_packages_come_from_its_own_interpreter(tmp_path: Path) -> None:
    installed = tmp_path / "torchlint-site-packages"
    shutil.copytree(
        ROOT / "torchlint", installed / "torchlint", ignore=shutil.ignore_patterns("__pycache__")
    )
    _package(installed, "torchlint's environment")
    user = tmp_path / "user-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(user)], check=True)
    user_site = next((user / "lib").glob("python3*/site-packages"))
    _package(user_site, "user")
    # the user's environment has its own torch: this test's, through a .pth file
    (user_site / "torch_from_test.pth").write_text(site.getsitepackages()[0] + "\n")
    (tmp_path / "train.py").write_text(SCRIPT)
    runner = textwrap.dedent(
        f"""
        import json, sys
        sys.path.insert(0, {str(installed)!r})
        from torchlint.runtime.launcher import RunRequest, run_check
        from pathlib import Path
        request = RunRequest("grads", Path({str(tmp_path / "train.py")!r}), steps=5,
                             timeout_s=120,
                             python={str(user / "bin" / "python")!r})
        print(json.dumps(run_check(request)))
        """
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", runner],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["status"] == "completed", result.get("error") or result["summary"]
    assert result["environment"]["torch"].startswith("2.")

"""Builds the platform-specific .vsix that carries torchlint and its dependencies.

    python vscode-extension/scripts/package.py --target linux-x64 [--python 3.10,3.11,3.12,3.13]

With the extension's `torchlint.importStrategy` at `useBundled` (or at `fromEnvironment` with an
interpreter that has no torchlint), the language server runs from this bundle, in the user's own
interpreter: `bundled/tool/lsp_server.py` puts `bundled/tool` (torchlint alone) and
`bundled/libs` (its dependencies) first on `sys.path`. The runtime checks start the user's
script in that interpreter with `bundled/tool` on PYTHONPATH and nothing else of the bundle, so
the script keeps its own packages and its own torch.

What it does, from the package registries only:

1. builds torchlint's wheel from this checkout (`pip wheel --no-deps`) and unpacks its package
   into `bundled/tool/`;
2. for each Python version, downloads the wheels of torchlint's dependencies for the target
   platform (`pip download --only-binary=:all: --platform ... --python-version ...`), at the
   versions this checkout's environment has (so every Python version gets the same ones), and
   unpacks them into `bundled/libs/`: the pure-Python files are the same for every version,
   and each native module is named for its version (`libcst/native.cpython-312-...so`), so one
   folder serves them all;
3. runs `vsce package --target TARGET`, which writes `torchlint-TARGET-VERSION.vsix`.

Targets are VS Code's (`linux-x64`, `linux-arm64`, `darwin-x64`, `darwin-arm64`, `win32-x64`);
each maps to the wheel platform tags below. Only what is checked by the tests here (linux-x64)
has run; the others are the same steps with other tags.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path

EXTENSION = Path(__file__).resolve().parents[1]
REPOSITORY = EXTENSION.parent
BUNDLED = EXTENSION / "bundled"

#: VS Code target -> pip platform tags, most specific first
PLATFORMS: dict[str, list[str]] = {
    "linux-x64": ["manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64"],
    "linux-arm64": ["manylinux_2_28_aarch64", "manylinux_2_17_aarch64", "manylinux2014_aarch64"],
    "darwin-x64": ["macosx_10_12_x86_64", "macosx_10_9_x86_64"],
    "darwin-arm64": ["macosx_11_0_arm64"],
    "win32-x64": ["win_amd64"],
}
PYTHONS = ("3.10", "3.11", "3.12", "3.13")
#: torchlint's dependencies and theirs (`tomli` only below Python 3.11)
DEPENDENCIES = (
    "libcst",
    "pyyaml",
    "pygls",
    "lsprotocol",
    "cattrs",
    "attrs",
    "typing_extensions",
    "rich",
    "markdown-it-py",
    "mdurl",
    "pygments",
)
TOMLI = "tomli>=2.0"


def pins() -> list[str]:
    """The dependencies at the versions of this checkout's environment."""
    return [f"{name}=={metadata.version(name)}" for name in DEPENDENCIES]


QUIET = False


def run(command: list[str], cwd: Path | None = None) -> None:
    if not QUIET:
        print("+ " + " ".join(command), flush=True)
    output = subprocess.DEVNULL if QUIET else None
    subprocess.run(command, cwd=cwd, check=True, stdout=output)


def unpack(wheel: Path, into: Path) -> None:
    """A wheel's files without its `.dist-info` (and `.data`) folders."""
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.infolist():
            top = member.filename.split("/", 1)[0]
            if top.endswith((".dist-info", ".data")) or member.is_dir():
                continue
            target = into / member.filename
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(member) as source, target.open("wb") as out:
                shutil.copyfileobj(source, out)


def bundle(target: str, pythons: list[str], work: Path) -> dict[str, object]:
    shutil.rmtree(BUNDLED, ignore_errors=True)
    tool, libs = BUNDLED / "tool", BUNDLED / "libs"
    libs.mkdir(parents=True)
    own = work / "torchlint"
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(own), str(REPOSITORY)])
    (wheel,) = own.glob("torchlint-*.whl")
    unpack(wheel, tool)
    shutil.copy(EXTENSION / "scripts" / "lsp_server.py", tool / "lsp_server.py")
    platforms = [flag for tag in PLATFORMS[target] for flag in ("--platform", tag)]
    for python in pythons:
        folder = work / f"py{python}"
        folder.mkdir()
        wanted = pins() + ([TOMLI] if python == "3.10" else [])
        run(
            [
                sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                "--only-binary=:all:", "--implementation", "cp", "--python-version", python,
                *platforms, "-d", str(folder), *wanted,
            ]
        )  # fmt: skip
        for found in sorted(folder.glob("*.whl")):
            unpack(found, libs)
    for tests in libs.glob("libcst/**/tests"):  # libcst's own test-suite
        shutil.rmtree(tests)
    manifest = {
        "target": target,
        "pythons": pythons,
        "torchlint": wheel.name,
        "dependencies": pins(),
    }
    (BUNDLED / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", choices=sorted(PLATFORMS), required=True)
    parser.add_argument("--python", default=",".join(PYTHONS), help="Python versions to carry")
    parser.add_argument("--no-package", action="store_true", help="bundle only, no .vsix")
    parser.add_argument("--keep", action="store_true", help="keep bundled/ after packaging")
    parser.add_argument("--quiet", action="store_true", help="only errors and the .vsix's name")
    args = parser.parse_args(argv)
    global QUIET
    QUIET = args.quiet
    pythons = [version.strip() for version in args.python.split(",") if version.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        manifest = bundle(args.target, pythons, Path(tmp))
    if not QUIET:
        print(json.dumps(manifest, indent=2))
    if args.no_package:
        return 0
    # The same flags as `npm run package` (package.json), with the target.
    scripts = json.loads((EXTENSION / "package.json").read_text())["scripts"]
    flags = scripts["package"].split()[2:]
    vsce = EXTENSION / "node_modules" / ".bin" / "vsce"
    try:
        run([str(vsce), "package", *flags, "--target", args.target], cwd=EXTENSION)
        version = json.loads((EXTENSION / "package.json").read_text())["version"]
        print(f"packaged {EXTENSION.name}/torchlint-{args.target}-{version}.vsix")
    finally:
        if not args.keep:
            shutil.rmtree(BUNDLED, ignore_errors=True)  # `npm run package` stays universal
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

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
3. checks the bundle (`check_bundle`): every native module is a binary for the target's
   operating system and processor (read from its ELF, Mach-O or PE header, not from its name),
   one per Python version, and every dependency's package is there;
4. runs `vsce package --target TARGET`, which writes `torchlint-TARGET-VERSION.vsix`.

Targets are VS Code's (`linux-x64`, `linux-arm64`, `darwin-x64`, `darwin-arm64`, `win32-x64`);
each maps to the wheel platform tags below. linux-x64 is built and installed into a real VS Code
by the end-to-end test here; darwin-arm64 and win32-x64 were built here and their listings
checked (the binaries' headers), but never run.
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
#: distribution -> the package folder it installs, where the names differ
PACKAGE_OF = {"pyyaml": "yaml", "markdown-it-py": "markdown_it", "typing_extensions": ""}

#: VS Code target -> (operating system, processor) of its native modules
TARGET_BINARY = {
    "linux-x64": ("linux", "x64"),
    "linux-arm64": ("linux", "arm64"),
    "darwin-x64": ("darwin", "x64"),
    "darwin-arm64": ("darwin", "arm64"),
    "win32-x64": ("win32", "x64"),
}
_ELF_MACHINES = {62: "x64", 183: "arm64"}
_MACHO_CPUS = {0x01000007: "x64", 0x0100000C: "arm64"}
_PE_MACHINES = {0x8664: "x64", 0xAA64: "arm64"}


def binary_kind(data: bytes) -> tuple[str, set[str]] | None:
    """The operating system and processors a native module was built for, from its header:
    ELF (linux), Mach-O, thin or universal (darwin), PE (win32); None when it is none of them."""
    if data[:4] == b"\x7fELF":
        little = data[5] == 1
        machine = int.from_bytes(data[18:20], "little" if little else "big")
        return "linux", {_ELF_MACHINES.get(machine, f"machine {machine}")}
    if data[:4] == b"\xcf\xfa\xed\xfe":  # 64-bit Mach-O, little-endian
        cpu = int.from_bytes(data[4:8], "little")
        return "darwin", {_MACHO_CPUS.get(cpu, f"cpu {cpu:#x}")}
    if data[:4] == b"\xca\xfe\xba\xbe":  # universal: a list of thin binaries
        count = int.from_bytes(data[4:8], "big")
        cpus = {int.from_bytes(data[8 + 20 * i : 12 + 20 * i], "big") for i in range(count)}
        return "darwin", {_MACHO_CPUS.get(cpu, f"cpu {cpu:#x}") for cpu in cpus}
    if data[:2] == b"MZ" and len(data) >= 64:
        header = int.from_bytes(data[60:64], "little")
        if data[header : header + 4] == b"PE\0\0":
            machine = int.from_bytes(data[header + 4 : header + 6], "little")
            return "win32", {_PE_MACHINES.get(machine, f"machine {machine:#x}")}
    return None


def check_bundle(libs: Path, target: str, pythons: list[str]) -> list[str]:
    """What is wrong with the dependencies bundled in `libs` for `target` (empty: nothing): a
    native module for another platform, a Python version without its copy of a native module,
    a dependency whose package is missing."""
    problems: list[str] = []
    system, processor = TARGET_BINARY[target]
    versions: dict[str, set[str]] = {}  # native module (path without tags) -> Python versions
    for path in sorted(libs.rglob("*")):
        if path.suffix not in (".so", ".pyd") or not path.is_file():
            continue
        name = path.relative_to(libs).as_posix()
        with path.open("rb") as handle:
            kind = binary_kind(handle.read(4096))
        if kind is None or kind[0] != system or processor not in kind[1]:
            found = "not a native module" if kind is None else f"{kind[0]} {'/'.join(kind[1])}"
            problems.append(f"{name}: built for {found}, not {system} {processor}")
        module, _, tags = name.partition(".")
        tag = tags.split(".")[0].split("-")[0]  # cpython-312, cp312, abi3
        digits = "".join(ch for ch in tag if ch.isdigit())
        version = f"{digits[0]}.{digits[1:]}" if tag != "abi3" and len(digits) >= 2 else "abi3"
        versions.setdefault(module, set()).add(version)
    for module, found in sorted(versions.items()):
        missing = [python for python in pythons if python not in found and "abi3" not in found]
        if missing:
            problems.append(f"{module}: no native module for Python {', '.join(missing)}")
    for name in DEPENDENCIES:
        package = PACKAGE_OF.get(name, name)
        if package and not (libs / package).is_dir():
            problems.append(f"{name}: its package `{package}/` is not in the bundle")
    if not versions:
        problems.append("no native module at all (libcst has one)")
    return problems


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
    problems = check_bundle(libs, target, pythons)
    if problems:
        raise SystemExit(f"the bundle for {target} is wrong:\n  " + "\n  ".join(problems))
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

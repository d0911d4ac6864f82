"""Draws the extension's icon, images/icon.png (128x128): a flame-orange ring, the loss curve of
a training run falling inside it, and a check mark. Pure Python (zlib), so anyone can redraw it.

    python vscode-extension/scripts/icon.py
"""

from __future__ import annotations

import math
import struct
import zlib
from pathlib import Path

SIZE = 128
OUT = Path(__file__).resolve().parents[1] / "images" / "icon.png"
BACKGROUND = (30, 30, 46)
ORANGE = (238, 76, 44)
CURVE = (250, 179, 135)
CHECK = (166, 227, 161)


def _distance_to_segment(
    px: float, py: float, a: tuple[float, float], b: tuple[float, float]
) -> float:
    ax, ay = a
    bx, by = b
    dx, dy = bx - ax, by - ay
    t = max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)))
    return math.hypot(px - (ax + t * dx), py - (ay + t * dy))


def _blend(
    base: tuple[int, int, int], top: tuple[int, int, int], alpha: float
) -> tuple[int, int, int]:
    return tuple(round(b + (t - b) * alpha) for b, t in zip(base, top, strict=True))  # type: ignore[return-value]


def _coverage(distance: float, width: float) -> float:
    """Antialiased coverage of a stroke `width` wide at `distance` from its centre line."""
    return max(0.0, min(1.0, width / 2 + 0.5 - distance))


def pixel(x: int, y: int) -> tuple[int, int, int, int]:
    cx = cy = SIZE / 2
    px, py = x + 0.5, y + 0.5
    # A rounded square.
    corner = 24
    qx = max(abs(px - cx) - (SIZE / 2 - corner), 0)
    qy = max(abs(py - cy) - (SIZE / 2 - corner), 0)
    inside = max(0.0, min(1.0, corner + 0.5 - math.hypot(qx, qy)))
    if inside == 0:
        return (0, 0, 0, 0)
    color = BACKGROUND
    ring = abs(math.hypot(px - cx, py - cy) - 44)
    color = _blend(color, ORANGE, _coverage(ring, 9))
    # The loss curve: an exponential decay across the ring.
    curve = min(
        _distance_to_segment(px, py, (36 + 4 * i, 44 + 40 * (1 - math.exp(-i / 3))),
                             (40 + 4 * i, 44 + 40 * (1 - math.exp(-(i + 1) / 3))))
        for i in range(14)
    )  # fmt: skip
    color = _blend(color, CURVE, _coverage(curve, 5))
    check = min(
        _distance_to_segment(px, py, (62, 92), (72, 102)),
        _distance_to_segment(px, py, (72, 102), (96, 74)),
    )
    color = _blend(color, CHECK, _coverage(check, 8))
    return (*color, round(255 * inside))


def png(width: int, height: int, rows: list[bytes]) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    raw = b"".join(b"\x00" + row for row in rows)
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def main() -> int:
    rows = [bytes(v for x in range(SIZE) for v in pixel(x, y)) for y in range(SIZE)]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(png(SIZE, SIZE, rows))
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

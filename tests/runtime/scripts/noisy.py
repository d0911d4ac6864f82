"""Prints megabytes before it crashes."""

import sys

for i in range(200_000):
    print(f"progress line {i:06d} " + "x" * 40)
print("the real error comes last", file=sys.stderr)
raise ValueError("bad config")

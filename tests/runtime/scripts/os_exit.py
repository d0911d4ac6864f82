"""Leaves with os._exit, skipping every handler."""

import os

print("shutting down hard", flush=True)
os._exit(3)

"""Matplotlib figures the notebooks share. Every axis is labelled, with units."""
from __future__ import annotations

import matplotlib.pyplot as plt

# One colour per idea, used the same way in every notebook.
COLORS = {"prefill": "#1f77b4", "decode": "#ff7f0e", "cached": "#2ca02c", "recompute": "#d62728",
          "K": "#9467bd", "V": "#8c564b", "mask": "#7f7f7f"}


def new_figure(ncols: int = 1, width: float = 6.0, height: float = 3.6):
    """A figure with ``ncols`` axes side by side (returns ``fig, axes`` with axes always a list)."""
    fig, axes = plt.subplots(1, ncols, figsize=(width * ncols if ncols > 1 else width, height), squeeze=False)
    return fig, list(axes[0])


def format_bytes(n: float) -> str:
    """1536 -> '1.5 KiB' (binary units, as memory is sold and allocated)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"

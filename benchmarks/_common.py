"""What the benchmark scripts share: where the real data lies, and the interval they quote.

Imported by the scripts of this folder, each run as `python benchmarks/<script>`: their own folder is first on sys.path.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def data_dir() -> Path:
    """The shared data: $CLINAUDIT_DATA, else ../shared/data beside the checkout (a worktree elsewhere has
    none), else /work/shared/data; the first that is there, else the last (its absence is the caller's to say)."""
    env = os.environ.get("CLINAUDIT_DATA")
    candidates = ([Path(env)] if env else []) + [ROOT.parent / "shared" / "data", Path("/work/shared/data")]
    return next((c for c in candidates if c.is_dir()), candidates[-1])


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson interval of k in n: honest at small n (52 "no citation needed" claims); (0, 1) for n = 0."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)

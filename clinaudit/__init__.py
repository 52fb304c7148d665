"""clinaudit: audit medical writing for uncited claims and bad citations.

The library API is `audit_text` and `audit_paths`; both return frozen dataclasses
from `clinaudit.core.models`.
"""

from __future__ import annotations

from clinaudit.core.version import __version__

__all__ = ["__version__", "audit_paths", "audit_text"]


def __getattr__(name: str):  # the pipeline loads on first use, not on `import clinaudit`
    if name in ("audit_text", "audit_paths"):
        from clinaudit.run import pipeline

        return getattr(pipeline, name)
    raise AttributeError(name)

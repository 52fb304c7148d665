"""The environment, read once: the one module that reads `os.environ` for an option or a key.

The keys a run may send are `Secrets`: kept apart from the options (which are printed in a
debugger, pickled to `--jobs` workers and Dask, compared in tests), never printed, cached or
pickled, and sent nowhere a config file found in an audited folder chose.

Every option that a variable sets declares it (`env=` in clinaudit/options/stages.py);
`CLINAUDIT_{API}_URL` is a family, one variable per service API (`CLINAUDIT_EUTILS_URL`).
The keys are read into `Secrets`, never into the options. What is read here sits under
the command line's flags and over a config file's keys, as in pip and git; a value that
is wrong is an error naming its variable, never ignored.

The terminal and CI edges read their own (`COLUMNS`, `GITHUB_WORKSPACE`, the command
line's `CLINAUDIT_DEBUG` and `CLINAUDIT_LOG_FILE`): none of them is an option.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from clinaudit.core.errors import InputError
from clinaudit.core.records import compared
from clinaudit.options.kinds import Problem
from clinaudit.options.spec import Spec

NCBI_KEY = "NCBI_API_KEY"
JUDGE_KEY = "CLINAUDIT_JUDGE_API_KEY"
CERTIFICATES = ("SSL_CERT_FILE", "SSL_CERT_DIR")


def values(table: Mapping[str, Spec], environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Option field → the value its variable gives (`table`: every option's declaration), for each variable
    that is set (an empty one is not)."""
    environ = os.environ if environ is None else environ
    declared = {spec.env for spec in table.values() if spec.env and "{API}" not in spec.env}
    out: dict[str, Any] = {}
    for name, spec in table.items():
        if "{API}" in spec.env:
            found = _family(spec, environ, declared)
            if found:
                out[name] = found
        elif spec.env:
            raw = environ.get(spec.env, "").strip()
            if raw:
                out[name] = _value(spec, spec.env, raw)
    if any(environ.get(name, "").strip() for name in CERTIFICATES):
        out["system_certificates"] = True
    return out


def _value(spec: Spec, variable: str, raw: str) -> Any:
    try:
        return spec.kind.text(raw)
    except Problem as problem:
        raise InputError(f"${variable} {problem}") from None


def _family(spec: Spec, environ: Mapping[str, str], declared: set[str]) -> tuple[tuple[str, str], ...]:
    """`CLINAUDIT_{API}_URL`: (api, url) for each variable of the family that is set, by API name."""
    head, tail = spec.env.split("{API}")
    pattern = re.compile(rf"^{re.escape(head)}([A-Z0-9]+){re.escape(tail)}$")
    found = {}
    for variable, raw in environ.items():
        m = pattern.match(variable)
        if m and variable not in declared and raw.strip():
            found[m.group(1).lower()] = _value(spec, variable, raw.strip())
    return tuple(sorted(found.items()))


@compared
@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Secrets:
    """NCBI_API_KEY (sent to the E-utilities only) and CLINAUDIT_JUDGE_API_KEY (to the judge only)."""

    ncbi_api_key: str | None = field(default=None, repr=False)
    judge_api_key: str | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        def shown(key: str | None) -> str:
            return "None" if key is None else "'***'"

        return f"Secrets(ncbi_api_key={shown(self.ncbi_api_key)}, judge_api_key={shown(self.judge_api_key)})"

    def __reduce__(self):  # a key never leaves the process in a pickle (--jobs workers, Dask)
        raise TypeError("Secrets are not pickled: a key stays in the process that read it")

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Secrets:
        """NCBI_API_KEY and CLINAUDIT_JUDGE_API_KEY, as the environment sets them."""
        environ = os.environ if environ is None else environ
        return cls(environ.get(NCBI_KEY, "").strip() or None, environ.get(JUDGE_KEY, "").strip() or None)

    def without_ncbi(self) -> Secrets:
        return replace(self, ncbi_api_key=None)

    def without_judge(self) -> Secrets:
        return replace(self, judge_api_key=None)

    @property
    def values(self) -> list[str]:
        """Every key set, for masking in messages and logs."""
        return [k for k in (self.ncbi_api_key, self.judge_api_key) if k]

"""The records survive pickling whole, and cheaply: --jobs and Dask send every Document back."""

from __future__ import annotations

import dataclasses
import pickle

from clinaudit import audit_paths
from clinaudit.check import corrections
from clinaudit.core.models import Options
from clinaudit.read.document import read_document

from helpers import SAMPLES


def test_documents_and_reports_come_back_from_a_pickle_equal():
    options = Options(offline=True)
    for path in sorted(SAMPLES.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        document = read_document(path.name, [(text, 0)], True, corrections.for_report(path.name, options))
        assert pickle.loads(pickle.dumps(document)) == document
    result = audit_paths([str(SAMPLES)], options)
    assert pickle.loads(pickle.dumps(result)) == result
    assert pickle.loads(pickle.dumps(options)) == options


def test_unpickling_never_asks_dataclasses_for_the_fields(monkeypatch):
    """The dataclass default called fields() per object: 85% of the parent's unpickling time."""
    result = audit_paths([str(SAMPLES)], Options(offline=True))
    body = pickle.dumps(result)

    def refuse(*args, **kwargs):
        raise AssertionError("dataclasses.fields() called while pickling")

    monkeypatch.setattr(dataclasses, "fields", refuse)
    assert pickle.loads(body) == result
    assert pickle.dumps(result) == body

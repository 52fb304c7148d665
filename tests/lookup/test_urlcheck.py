"""`--check-urls`: real web pages on loopback addresses, every rule of the link check."""

from __future__ import annotations

import json
import socket
import time

import diskcache
import pytest

from clinaudit.core.models import Status
from clinaudit.lookup import urlcheck
from clinaudit.lookup.cache import ResolutionCache
from clinaudit.lookup.services.links import LinkCheck
from clinaudit.read.document import read_document

from helpers import stages
from helpers.cli import run_cli
from helpers.fakeweb import FakeWeb
from helpers.resolve import check, citations, findings, statuses, write

LOCAL = ("127.0.0.1",)


@pytest.fixture
def web():
    with FakeWeb() as server:
        yield server


@pytest.fixture(autouse=True)
def _in_tmp_path(tmp_path, monkeypatch):
    """Each test writes its config beside its report: settings come from the working directory's."""
    monkeypatch.chdir(tmp_path)


def checker(allow=LOCAL, **kwargs) -> urlcheck.LinkChecker:
    return urlcheck.LinkChecker(allow, **kwargs)


def test_the_published_limits():
    assert (urlcheck.TIMEOUT, urlcheck.MAX_REDIRECTS, urlcheck.MAX_BODY) == (5.0, 3, 256 * 1024)
    assert (urlcheck.IN_FLIGHT, urlcheck.PER_HOST) == (8, 2)
    assert dict(LinkCheck.keep) == {Status.VERIFIED: 7 * 86400, Status.NOT_FOUND: 86400} and LinkCheck.recheck is None


# ---------------------------------------------------------------- statuses


@pytest.mark.parametrize(
    "path, status",
    [
        ("/ok", Status.VERIFIED),
        ("/gone", Status.NOT_FOUND),
        ("/deleted", Status.NOT_FOUND),
        ("/forbidden", Status.UNVERIFIABLE),
        ("/busy", Status.UNVERIFIABLE),
        ("/broken", Status.UNVERIFIABLE),
    ],
)
def test_status_codes(web, path, status):
    result = checker().check(web.url(path))
    assert result.status is status, result.reason
    assert result.reason.startswith("HTTP ")


def test_one_head_request_is_enough_for_a_live_file(web):
    result = checker().check(web.url("/paper.pdf"))
    assert result.status is Status.VERIFIED and result.record is None
    assert [r["method"] for r in web.requests()] == ["HEAD"]


@pytest.mark.parametrize(
    "meta, doi",
    [
        ("citation", "10.3390/nu12030657"),
        ("dc", "10.1016/j.jamda.2019.11.018"),
        ("prism", "10.1161/circulationaha.119.044620"),
        ("none", ""),
    ],
)
def test_a_live_page_is_read_to_its_head_for_the_article_doi(web, meta, doi):
    result = checker().check(web.url(f"/article?meta={meta}"))
    assert result.status is Status.VERIFIED
    assert [r["method"] for r in web.requests("/article")] == ["HEAD", "GET"]
    assert (result.record.doi if result.record else "") == doi  # never the tag in the body, past </head>
    assert (f"the page gives DOI {doi}" in result.reason) is bool(doi)


def test_the_head_alone_is_read(web):
    stats = checker()
    stats.check(web.url("/article"))
    assert stats.stats.body_bytes < 64 * 1024  # the page is 180 KB; reading stopped at </head>


@pytest.mark.parametrize("path", ["/head-refused", "/head-404", "/head-dropped"])
def test_a_head_answered_with_an_error_is_asked_again_with_get(web, path):
    result = checker().check(web.url(path))
    assert result.status is Status.VERIFIED, result.reason
    assert [r["method"] for r in web.requests(path)] == ["HEAD", "GET"]


def test_a_dead_link_is_confirmed_by_get(web):
    assert checker().check(web.url("/gone")).status is Status.NOT_FOUND
    assert [r["method"] for r in web.requests("/gone")] == ["HEAD", "GET"]


def test_redirects_are_followed_up_to_three(web):
    result = checker().check(web.url("/redirect/2"))  # 3 redirects: /2 → /1 → /0 → /ok
    assert result.status is Status.VERIFIED
    assert "after 3 redirects to" in result.reason and result.reason.endswith("/ok")
    too_many = checker().check(web.url("/redirect/3"))
    assert too_many.status is Status.UNVERIFIABLE and "more than 3 redirects" in too_many.reason


def test_a_redirect_to_a_dead_page_is_dead(web):
    result = checker().check(web.url("/to?url=/gone"))
    assert result.status is Status.NOT_FOUND and "after 1 redirect to" in result.reason


def test_no_cookies_and_no_credentials_are_sent(web):
    url = web.url("/redirect/2").replace("http://", "http://someone:secret@")
    assert checker().check(url).status is Status.VERIFIED
    sent = web.requests()
    assert len(sent) == 5  # three redirects, the page, and its head read with GET
    for request in sent:
        headers = {k.lower(): v for k, v in request["headers"].items()}
        assert "cookie" not in headers and "authorization" not in headers
        assert "secret" not in json.dumps(request)
        assert headers["user-agent"].startswith("clinaudit/")


def test_a_slow_page_times_out_unverifiable(web):
    start = time.monotonic()
    result = checker(timeout=0.5).check(web.url("/slow?s=20"))
    assert result.status is Status.UNVERIFIABLE and "timed out" in result.reason
    assert [r["method"] for r in web.requests()] == ["HEAD"]  # a timeout is not asked again with GET
    assert time.monotonic() - start < 15  # given up on, well before the page's 20 s


def test_a_page_that_drips_its_body_is_cut_at_the_timeout(web):
    """A byte every 0.5 s: no single read ever times out, the whole request does. Its 200 came in time."""
    start = time.monotonic()
    links = checker(timeout=5.0)  # room for the HEAD and the GET's 200 on a loaded machine
    result = links.check(web.url("/drip?head=405"))
    assert time.monotonic() - start < 15  # the drip goes on for 20 s
    assert result.status is Status.VERIFIED and links.stats.body_bytes < 20  # of the 40 it would send


def test_a_page_whose_headers_drip_past_the_timeout_is_unverifiable(web):
    start = time.monotonic()
    result = checker(timeout=1.0).check(web.url("/drip-headers"))
    assert result.status is Status.UNVERIFIABLE and "timed out" in result.reason
    assert time.monotonic() - start < 15  # the headers drip for 20 s


def test_at_most_256_kb_of_a_body_is_read(web):
    links = checker()
    result = links.check(web.url("/big?mb=4&head=405"))  # HEAD refused: the GET streams 4 MB
    assert result.status is Status.VERIFIED
    assert 0 < links.stats.body_bytes <= urlcheck.MAX_BODY


# ---------------------------------------------------------------- safety


@pytest.mark.parametrize(
    "url, kind",
    [
        ("http://10.1.2.3/page", "private"),
        ("http://192.168.0.1/", "private"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://224.0.0.1/", "multicast"),
        ("http://[::1]/", "loopback"),
        ("http://[::ffff:127.0.0.1]/", "loopback"),
        ("http://0.0.0.0/", "unspecified"),
        ("http://100.64.0.1/", "non-public"),  # shared address space: not private, not global either
        ("http://[::127.0.0.1]/", "loopback"),  # IPv4-compatible
        ("http://[::ffff:0:127.0.0.1]/", "loopback"),  # IPv4-translated
        ("http://[64:ff9b::a9fe:a9fe]/latest/meta-data/", "link-local"),  # NAT64 of 169.254.169.254
        ("http://[64:ff9b::10.0.0.1]/", "private"),
        ("http://[2002:7f00:1::1]/", "loopback"),  # 6to4 of 127.0.0.1
        ("http://[2002:c0a8:101::1]/", "private"),  # 6to4 of 192.168.1.1
        ("http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "private"),  # Teredo: its client is 192.0.2.45
        ("http://[64:ff9b:1::a00:1]/", "local NAT64"),
    ],
)
def test_non_public_addresses_are_refused(url, kind):
    result = checker(allow=()).check(url)
    assert result.status is Status.UNVERIFIABLE
    assert result.reason.startswith("refused for safety:") and f"a {kind} address" in result.reason


def test_loopback_is_refused_unless_the_host_is_allowed(web):
    refused = checker(allow=()).check(web.url("/ok"))
    assert refused.status is Status.UNVERIFIABLE and "loopback" in refused.reason
    by_name = checker(allow=()).check(web.url("/ok", host="localhost"))
    assert by_name.status is Status.UNVERIFIABLE and "loopback" in by_name.reason
    assert web.requests() == []  # nothing reached the server
    assert checker(allow=("127.0.0.1",)).check(web.url("/ok")).status is Status.VERIFIED


@pytest.mark.parametrize("host", ["[::127.0.0.1]", "[::ffff:0:127.0.0.1]", "[::ffff:127.0.0.1]", "[2002:7f00:1::1]"])
def test_an_ipv6_form_of_loopback_never_reaches_the_server(web, host):
    """Python calls these global; what they embed, 127.0.0.1, is where a stack that routes them goes."""
    result = checker(allow=()).check(f"http://{host}:{web.port}/ok")
    assert result.status is Status.UNVERIFIABLE and "127.0.0.1, is a loopback address" in result.reason
    assert web.requests() == []


def test_public_addresses_embedded_in_ipv6_are_let_through():
    assert [str(a) for a in urlcheck.embedded_ipv4(urlcheck._ip("64:ff9b::808:808"))] == ["8.8.8.8"]
    for host in ("64:ff9b::808:808", "2002:808:808::1", "2606:4700::1111"):
        urlcheck._refuse_unless_public(host, urlcheck._ip(host))  # no Refused
    assert urlcheck.embedded_ipv4(urlcheck._ip("::1")) == []


def test_a_name_is_refused_after_dns_resolution(web):
    """2130706433 is no IP literal to urlsplit, but the resolver makes it 127.0.0.1."""
    result = checker(allow=()).check(f"http://2130706433:{web.port}/ok")
    assert result.status is Status.UNVERIFIABLE and "(127.0.0.1) is a loopback address" in result.reason
    assert web.requests() == []


def test_one_private_address_among_public_ones_is_enough_to_refuse():
    def resolver(host, port, **_):
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.5", port)),
        ]

    result = checker(allow=(), resolver=resolver).check("http://mixed.example/")
    assert result.status is Status.UNVERIFIABLE and "mixed.example (10.0.0.5) is a private address" in result.reason


def test_the_connection_goes_to_the_address_that_was_checked(web):
    """An allowed name resolves once; the request goes to that address with the name in Host."""
    calls = []

    def resolver(host, port, **_):
        calls.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]

    result = checker(allow=("intranet.example",), resolver=resolver).check(
        f"http://intranet.example:{web.port}/paper.pdf"
    )
    assert result.status is Status.VERIFIED
    assert calls == ["intranet.example"]
    (request,) = web.requests()
    assert request["headers"]["Host"] == f"intranet.example:{web.port}"


def test_every_redirect_hop_is_checked_again():
    with FakeWeb(hosts=("127.0.0.1", "127.0.0.2")) as web:
        other = web.url("/ok", host="127.0.0.2")
        result = checker(allow=("127.0.0.1",)).check(web.url(f"/to?url={other}"))
        assert result.status is Status.UNVERIFIABLE and "127.0.0.2 is a loopback address" in result.reason
        assert [r["server"] for r in web.requests()] == ["127.0.0.1"]  # the HEAD; 127.0.0.2 never
        inside = checker(allow=("127.0.0.1",)).check(web.url("/to?url=http://10.0.0.1/admin"))
        assert inside.status is Status.UNVERIFIABLE and "10.0.0.1 is a private address" in inside.reason


@pytest.mark.parametrize("target", ["ftp://example.org/x", "file:///etc/passwd", "javascript:alert(1)"])
def test_a_redirect_to_another_scheme_is_refused(web, target):
    result = checker().check(web.url(f"/to?url={target}"))
    assert result.status is Status.UNVERIFIABLE and "only http(s) is checked" in result.reason


def test_a_path_with_spaces_and_accents_is_sent_percent_encoded(web):
    result = checker().check(web.url("/gone/Maladie de Lyme é"))
    assert result.status is Status.NOT_FOUND
    assert web.requests()[0]["path"] == "/gone/Maladie%20de%20Lyme%20%C3%A9"


def test_a_non_http_url_is_refused():
    result = checker().check("ftp://127.0.0.1/file")
    assert result.status is Status.UNVERIFIABLE and "ftp: URL" in result.reason


# ---------------------------------------------------------------- DNS


def _dns(known: dict[str, str]):
    def resolver(host, port, **_):
        if host in known:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (known[host], port))]
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    return resolver


def test_a_host_that_does_not_exist_is_a_dead_link_once_dns_works():
    links = checker(allow=(), resolver=_dns({"eutils.example": "93.184.216.34"}), canary="eutils.example")
    result = links.check("https://no-such-host.example/page")
    assert result.status is Status.NOT_FOUND and result.reason == "no such host: no-such-host.example"


def test_nxdomain_is_not_evidence_when_dns_resolves_nothing():
    links = checker(allow=(), resolver=_dns({}), canary="eutils.example")  # no network: every name is unknown
    result = links.check("https://no-such-host.example/page")
    assert result.status is Status.UNVERIFIABLE and "no network?" in result.reason


def test_with_the_real_resolver_an_unknown_name_never_becomes_dead_without_proof():
    """The canary is the E-utilities host; an IP address proves nothing about DNS."""
    result = checker(allow=(), canary="127.0.0.1").check("http://no-such-host.invalid/")
    assert result.status is Status.UNVERIFIABLE


# ---------------------------------------------------------------- many at once


def test_at_most_2_requests_per_host(web):
    urls = [web.url(f"/hold?s=0.3&n={n}") for n in range(6)]
    found = checker().check_many(urls, 30)
    assert {r.status for r in found.values()} == {Status.VERIFIED}
    assert web.max_in_flight["127.0.0.1"] == 2


def test_at_most_8_in_flight():
    hosts = tuple(f"127.0.0.{k}" for k in range(1, 7))
    with FakeWeb(hosts=hosts) as web:
        urls = [web.url(f"/hold?s=0.3&n={n}", host=h) for h in hosts for n in range(3)]
        found = checker(allow=hosts).check_many(urls, 30)
        assert {r.status for r in found.values()} == {Status.VERIFIED} and len(found) == 18
        assert max(web.max_in_flight[h] for h in hosts) <= 2
        assert 2 < web.max_in_flight["*"] <= 8


def test_what_the_time_limit_leaves_is_unverifiable(web):
    urls = [web.url(f"/slow?s=20&n={n}") for n in range(3)]
    start = time.monotonic()
    found = checker(timeout=20).check_many(urls, 0.5)
    assert time.monotonic() - start < 15  # the pages would answer after 20 s
    assert {r.status for r in found.values()} == {Status.UNVERIFIABLE}
    assert any("time limit (--timeout)" in r.reason for r in found.values())


# ---------------------------------------------------------------- cache


def test_results_are_cached_found_7_days_dead_1_day(web, tmp_path):
    options = stages.options(check_urls=True, url_allow_hosts=LOCAL)
    ids = [f"url:{web.url('/ok')}", f"url:{web.url('/gone')}", f"url:{web.url('/forbidden')}"]
    text = "".join(f"Cats purr at {k} Hz in this study ({cid[4:]}).\n\n" for k, cid in enumerate(ids))
    document = read_document("cats.md", [(text, 0)], True)
    first = stages.resolve([document], options)
    assert [first[c].status for c in ids] == [Status.VERIFIED, Status.NOT_FOUND, Status.UNVERIFIABLE]
    asked = len(web.requests())
    again = stages.resolve([document], options)
    assert [again[c].status for c in ids] == [Status.VERIFIED, Status.NOT_FOUND, Status.UNVERIFIABLE]
    assert len(web.requests()) == asked + 2  # only the unverifiable page is asked again: failures are never cached
    store = diskcache.Cache(str(options.cache_dir))
    try:
        now = time.time()
        _, found_expires = store.get(ResolutionCache.key("url", ids[0]), expire_time=True, default=None) or (0, 0)
        _, dead_expires = store.get(ResolutionCache.key("url", ids[1]), expire_time=True, default=None) or (0, 0)
    finally:
        store.close()
    assert abs(found_expires - now - 7 * 86400) < 120
    assert abs(dead_expires - now - 86400) < 120
    offline = stages.resolve([document], stages.options(check_urls=True, offline=True))
    assert [offline[c].status for c in ids] == [Status.VERIFIED, Status.NOT_FOUND, Status.UNVERIFIABLE]
    assert "--offline" in offline[ids[2]].reason


# ---------------------------------------------------------------- end to end


REPORT = """# Cats

Paracetamol is toxic to cats [1]. Cats cannot break it down [2]. Even a small dose can kill a cat [3].

## References

1. {ok}
2. {gone}
3. {forbidden}
"""


def _report(tmp_path, web, config: str = 'url-allow-hosts = ["127.0.0.1"]\n'):
    (tmp_path / ".clinaudit.toml").write_text(config, encoding="utf-8")
    text = REPORT.format(ok=web.url("/ok"), gone=web.url("/gone"), forbidden=web.url("/forbidden"))
    return write(tmp_path, text)


def test_without_check_urls_no_report_url_is_fetched(web, tmp_path):
    _, data, _ = check(_report(tmp_path, web))
    assert set(statuses(data).values()) == {"unchecked"}
    assert web.requests() == []


def test_check_urls_end_to_end(web, tmp_path):
    report = _report(tmp_path, web)
    proc, data, _ = check(report, "--check-urls")
    assert proc.returncode == 1  # a dead link is high
    assert statuses(data) == {
        f"url:{web.url('/ok')}": "verified",
        f"url:{web.url('/gone')}": "not_found",
        f"url:{web.url('/forbidden')}": "unverifiable",
    }
    (dead,) = [f for f in findings(data, f"url:{web.url('/gone')}") if f["rule"] != "low-credibility-source"]
    assert (dead["rule"], dead["severity"]) == ("dead-link", "high")
    assert dead["message"] == f"URL {web.url('/gone')} leads nowhere (HTTP 404)"
    (blocked,) = [f for f in findings(data, f"url:{web.url('/forbidden')}") if f["rule"] != "low-credibility-source"]
    assert (blocked["rule"], blocked["severity"]) == ("unverifiable-citation", "low")
    assert citations(data)[f"url:{web.url('/ok')}"]["note"] == "HTTP 200"
    table = run_cli("check", str(report), "--check-urls")
    assert "verified (link)" in table.stdout and "not_found (link)" in table.stdout


def test_check_urls_from_the_config_and_no_check_urls_beats_it(web, tmp_path):
    report = _report(tmp_path, web, 'check-urls = true\nurl-allow-hosts = ["127.0.0.1"]\n')
    _, data, _ = check(report)
    assert statuses(data)[f"url:{web.url('/ok')}"] == "verified"
    asked = len(web.requests())
    _, data, _ = check(report, "--no-check-urls", "--refresh")
    assert set(statuses(data).values()) == {"unchecked"} and len(web.requests()) == asked


def test_a_loopback_link_without_url_allow_hosts_is_not_fetched(web, tmp_path):
    _, data, _ = check(_report(tmp_path, web, ""), "--check-urls")
    assert set(statuses(data).values()) == {"unverifiable"}
    assert web.requests() == []


@pytest.mark.parametrize("hosts", ['["http://intranet.example"]', '["intranet.example:8080"]', '"intranet"'])
def test_a_bad_url_allow_hosts_is_one_line_and_exit_2(tmp_path, hosts):
    (tmp_path / ".clinaudit.toml").write_text(f"url-allow-hosts = {hosts}\n", encoding="utf-8")
    proc = run_cli("check", str(write(tmp_path, "Cats are mammals.\n")))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and ".clinaudit.toml:1: url-allow-hosts: must" in proc.stderr


def test_a_dead_link_gets_no_corrections_entry(web, tmp_path):
    """corrections.yaml holds PMIDs, DOIs and NCT ids; a link may come back tomorrow."""
    proc = run_cli("check", str(_report(tmp_path, web)), "--check-urls", "--suggest-corrections")
    assert proc.returncode == 1 and "dead-link" in proc.stdout
    assert "no citation to suggest a correction for" in proc.stdout


def test_an_article_page_that_gives_its_doi_scores_as_an_article_and_keeps_it_in_the_cache(web, tmp_path):
    (tmp_path / ".clinaudit.toml").write_text('url-allow-hosts = ["127.0.0.1"]\n', encoding="utf-8")
    article, page = web.url("/article?meta=dc"), web.url("/article?meta=none")
    report = write(tmp_path, f"Falls fell by a third with vitamin D in care homes ({article}; {page}).\n")
    for run in ("fetched", "cached"):
        asked = len(web.requests())
        _, data, _ = check(report, "--check-urls")
        cited = citations(data)
        assert (cited[f"url:{article}"]["credibility"], cited[f"url:{article}"]["credibility_source"]) == (
            75,
            "publisher_article",
        ), run
        assert cited[f"url:{page}"]["credibility_source"] == "unknown_web"
        assert not [f for f in findings(data, f"url:{article}") if f["rule"] == "low-credibility-source"]
        assert [f for f in findings(data, f"url:{page}") if f["rule"] == "low-credibility-source"]
        assert cited[f"url:{article}"]["topic"] == cited[f"url:{page}"]["topic"]  # the DOI scores it, no more
        if run == "cached":
            assert len(web.requests()) == asked

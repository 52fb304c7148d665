"""`--format html`, read back with the standard library's html.parser: what the page holds and what it never does.

The browser's side (clicks, filters, a hostile page in a real Chromium) is in test_html_browser.py.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clinaudit import audit_paths
from clinaudit.core.models import (
    AuditResult,
    CitationKind,
    CitationResult,
    Credibility,
    FigureCheck,
    FileReport,
    Finding,
    Grounding,
    MetadataResult,
    Record,
    Severity,
    Span,
    Status,
)
from clinaudit.core.text import printable, shown
from clinaudit.read.inputs import Source, read_chunks
from clinaudit.report.formats import FORMATS, render
from clinaudit.report.formats.html_format import CSP, PALETTE, SCRIPT, STATUS_LOOK, esc, esc_line, link_target, page

from helpers import samples_repo
from helpers.cli import run_cli

# A report written to break out of the page every way a page can be broken out of.
HOSTILE = """\
# Plan <img src=x onerror="window.__pwned=1;alert(1)">

Aspirin reduces the risk of stroke by 20% in adults <script>window.__pwned=1;alert(1)</script>.
Metformin 500 mg twice daily is the usual starting dose; see [the label](javascript:window.__pwned=1) for more.
</style><style>body{display:none}</style></textarea></title> "quoted" 'single' & amp; \u202ereversed\u202c \x1b[31m
<svg onload="window.__pwned=1"></svg><iframe src="javascript:window.__pwned=1"></iframe><a href="javascript:alert(1)">x</a>
Statins lower LDL cholesterol by 50% in most adults ]]><!-- --><base href="https://evil.example/"> (PMID: 29768149).
Ibuprofen 400 mg every 6 hours relieves pain <meta http-equiv="refresh" content="0;url=https://evil.example/">.
"""
PAYLOADS = ("<script>window.__pwned=1;alert(1)</script>", '<img src=x onerror="window.__pwned=1;alert(1)">',
            "</style><style>body{display:none}</style>", '<svg onload="window.__pwned=1"></svg>',
            '<base href="https://evil.example/">')  # fmt: skip


class Page(HTMLParser):
    """Every element with its attributes, the text of each script and style, and all text as a reader gets it."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self.text: list[str] = []
        self._raw: list[str] | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))
        if tag in ("script", "style"):
            self._raw = self.scripts if tag == "script" else self.styles
            self._raw.append("")

    def handle_startendtag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._raw = None

    def handle_data(self, data):
        if self._raw is not None:
            self._raw[-1] += data
        else:
            self.text.append(data)

    def all(self, tag: str = "", **attrs: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.elements if (not tag or t == tag) and all(a.get(k) == v for k, v in attrs.items())]

    def by_id(self, ident: str) -> tuple[str, dict[str, str | None]]:
        found = [(t, a) for t, a in self.elements if a.get("id") == ident]
        assert len(found) == 1, f"#{ident}: {len(found)} elements"
        return found[0]

    @property
    def plain(self) -> str:
        return "".join(self.text)


def sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def assert_inert(doc: Page) -> None:
    """One script (ours), one style (ours), both in the policy; no handler, no outside resource, no live script URL."""
    assert doc.scripts == [SCRIPT], "the page's only script is the filter script"
    assert len(doc.styles) == 1
    (meta,) = doc.all("meta", **{"http-equiv": "Content-Security-Policy"})
    policy = meta["content"] or ""
    assert f"'{sha256(doc.scripts[0])}'" in policy and f"'{sha256(doc.styles[0])}'" in policy
    assert "default-src 'none'" in policy and "unsafe" not in policy
    allowed = {"html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3", "main", "aside", "p",
               "span", "strong", "table", "tbody", "tr", "td", "code", "form", "fieldset", "legend", "label", "input",
               "nav", "ol", "ul", "li", "a", "div", "section", "details", "summary", "dl", "dt", "dd", "mark", "script"}  # fmt: skip
    tags = {t for t, _ in doc.elements}
    assert tags <= allowed, f"elements the renderer never writes: {tags - allowed}"
    for tag, attrs in doc.elements:
        assert not [k for k in attrs if k.startswith("on")], (tag, attrs)
        assert "style" not in attrs, (tag, attrs)
        if tag in ("link", "script", "img", "iframe", "source"):
            assert "src" not in attrs and "href" not in attrs, (tag, attrs)
        href = attrs.get("href")
        if href is not None:
            assert href.startswith("#") or re.match(r"https://[^\s\"'<>]+\Z", href), href
            assert tag == "a"


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A git work tree with the three samples and a hostile report; the CLI runs from its root."""
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    return samples_repo(tmp_path, **{"hostile.md": HOSTILE})


def audit(repo: Path, *paths: str, fmt: str = "html") -> str:
    proc = run_cli("check", *paths, "--format", fmt, cwd=repo)
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr
    return proc.stdout


def test_the_format_is_registered_and_the_cli_offers_it(repo):
    assert FORMATS["html"].module == "html_format"
    proc = run_cli("check", "--help", cwd=repo)
    assert "html" in proc.stdout


def test_every_finding_is_marked_on_its_line_and_linked_from_the_summary(repo, services):
    data = json.loads(audit(repo, "clean_cited.md", "llm_answer.md", "uncited_dosing.md", fmt="json"))
    doc = Page(audit(repo, "clean_cited.md", "llm_answer.md", "uncited_dosing.md"))
    assert_inert(doc)
    rows = doc.all("li")
    rows = [a for a in rows if a.get("class") == "frow"]
    assert len(rows) == sum(len(f["findings"]) for f in data["files"]) > 10
    links = {a["href"] for a in doc.all("a")}
    for n, report in enumerate(data["files"], 1):
        tag, attrs = doc.by_id(f"file-{n}")
        assert tag == "section"
        for k, finding in enumerate(report["findings"]):
            tag, attrs = doc.by_id(f"f{n}-x{k}")  # the badge on the line
            assert tag == "details" and attrs["data-sev"] == finding["severity"]
            assert attrs["data-rule"] == finding["rule"]
            assert f"#f{n}-x{k}" in links, "the summary links to it"
            doc.by_id(f"f{n}-L{finding['line']}")  # on a numbered line
    marks = doc.all("mark")
    assert {m["class"] for m in marks} >= {"hl-high", "hl-medium", "hl-low"}, "claims highlighted by severity"
    plain = doc.plain
    assert "Verdict: ✗ FAIL" in " ".join(plain.split())
    assert f"{data['summary']['coverage']:g}%" in plain
    for rule in {f["rule"] for r in data["files"] for f in r["findings"]}:
        assert doc.all("input", name="rule", value=rule), f"a filter for {rule}"
    for severity in ("high", "medium", "low"):
        assert doc.all("input", name="sev", value=severity)


def test_citations_carry_their_status_in_words_and_their_record(repo, services):
    data = json.loads(audit(repo, "llm_answer.md", "clean_cited.md", fmt="json"))
    text = audit(repo, "llm_answer.md", "clean_cited.md")
    doc = Page(text)
    plain = " ".join(doc.plain.split())
    statuses = {c["status"] for f in data["files"] for c in f["citations"]}
    assert {"verified", "retracted", "not_found", "unresolved"} <= statuses
    for status in statuses:
        look = STATUS_LOOK[Status(status)]
        assert f"{look.icon} {look.label}" in plain, f"{status}: icon and words"
    for n, report in enumerate(data["files"], 1):
        for k in range(len(report["citations"])):
            assert doc.by_id(f"f{n}-ci{k}")[0] == "details", "a citation opens its record where it stands"
            assert doc.by_id(f"f{n}-c{k}")[0] == "li", "and is listed with the file's citations"
            assert f"#f{n}-ci{k}" in {a["href"] for a in doc.all("a")}, "linking to it"
    assert "Inhaled Combined Budesonide-Formoterol as Needed in Mild Asthma." in plain
    assert "The New England journal of medicine" in plain
    assert "Figures checked" in plain and "“322 patients” ✓ in the abstract" in plain
    assert {a["href"] for a in doc.all("a")} >= {"https://pubmed.ncbi.nlm.nih.gov/29768149/"}


def test_a_hostile_report_stays_text(repo):
    text = audit(repo, "hostile.md")
    doc = Page(text)
    assert_inert(doc)
    plain = doc.plain
    for payload in PAYLOADS:
        assert payload in plain, f"shown as written: {payload}"
    assert "\u202e" not in text and "\x1b" not in text, "bidi and ESC written out, not passed through"
    assert "\\u202ereversed" in plain and "\\x1b[31m" in plain
    assert "javascript:" not in "".join(str(a.get("href")) for _, a in doc.elements)
    assert doc.all("mark", **{"data-sev": "high"}), "its claims are still found and marked"


def test_a_hostile_file_name_and_several_files_get_an_index(repo):
    name = '<img src=x onerror=alert(1)>".md'
    (repo / name).write_text(HOSTILE, encoding="utf-8")
    doc = Page(audit(repo, name, "uncited_dosing.md"))
    assert_inert(doc)
    (nav,) = doc.all("nav")
    assert nav["aria-label"] == "Files"
    assert {a["href"] for a in doc.all("a")} >= {"#file-1", "#file-2"}
    assert name in doc.plain


def hostile_result(tmp_path: Path) -> AuditResult:
    """Records as a database could return them, every field hostile: the page escapes what it did not write too."""
    evil = "<script>window.__pwned=1</script>\"'><img src=x onerror=alert(1)>"
    report = tmp_path / "r.md"
    report.write_text("See javascript:alert(1) and data:text/html,x here.\n", encoding="utf-8")
    span = Span(1, 5, 1, 24)
    record = Record(
        id="pmid:1", database=evil, exists=True, title=evil, journal=evil, year=2001, authors=(evil,), doi=evil,
        retracted_by=(evil,), concern=(evil,), trial_status=evil, why_stopped=evil,
    )  # fmt: skip
    citations = tuple(
        CitationResult(
            id=value,
            kind=kind,
            value=value,
            span=span,
            status=Status.RETRACTED,
            claims=(evil,),
            ref_text=evil,
            note=evil,
            record=record,
            metadata=MetadataResult(False, (evil,)),
            credibility=Credibility(3, evil),
            grounding=(Grounding(evil, 1, (FigureCheck(evil, "percent", False, (evil,)),)),),
        )
        for kind, value in (
            (CitationKind.URL, "javascript:alert(1)"),
            (CitationKind.URL, "data:text/html,<script>alert(1)</script>"),
            (CitationKind.URL, 'https://x.example/"onmouseover="alert(1)'),
            (CitationKind.DOI, '10.1/"><script>alert(1)</script>'),
        )
    )
    finding = Finding("retracted-citation", Severity.HIGH, span, evil, sentence=evil, suggestion=evil, why=evil)
    files = (
        FileReport(str(report), "fail", (finding,), citations, 1, 1, 1, note=evil),
        FileReport(evil, "fail", (finding,), (), 1, 1, 1, error=evil),
    )
    return AuditResult("fail", files)


def test_what_the_databases_return_is_escaped_too(tmp_path):
    text = page(hostile_result(tmp_path))
    doc = Page(text)
    assert_inert(doc)
    assert doc.plain.count("<script>window.__pwned=1</script>") > 10
    hrefs = [a["href"] for a in doc.all("a") if not str(a["href"]).startswith("#")]
    assert hrefs == [], "no link from a URL that is not plain http(s), nor from an id that needs quoting"


def test_only_plain_http_urls_become_links():
    assert link_target("https://example.org/a?b=c#d") == "https://example.org/a?b=c#d"
    assert link_target("HTTP://example.org/") == "HTTP://example.org/"
    for url in ("javascript:alert(1)", "JaVaScRiPt:alert(1)", " https://x.example/", "java\tscript:x",
                "data:text/html,x", "vbscript:x", 'https://x.example/"a', "https://x.example/\nb", "//x.example/"):  # fmt: skip
        assert link_target(url) is None, url


def test_escape_writes_out_markup_controls_and_bidi():
    assert esc("<a href='x'>&</a>") == "&lt;a href=&#x27;x&#x27;&gt;&amp;&lt;/a&gt;"
    assert esc("a\u202eb\x1bc\x00") == "a\\u202eb\\x1bc\\x00"
    assert esc("two\nlines\ttab") == "two lines\ttab"


# what a report may hold that escaping must see: markup, quotes, controls, bidi marks, newlines and tabs
_TRICKY = st.text(st.sampled_from("ab <>&\"'\n\t\r\x00\x1b\x7f\x85\u202e\u2066é\\x"), max_size=30)


@given(_TRICKY)
def test_the_escapes_quick_path_writes_what_the_full_escape_would(text):
    assert esc(text) == html.escape(printable(text).replace("\n", " "), quote=True)
    assert esc_line(text) == html.escape(shown(text), quote=True)


def _shown_lines(doc: str) -> list[str]:
    """The text of each source line of a page with nothing marked on it, as a reader sees it."""
    return [html.unescape(body) for body in re.findall(r'<span class="tx">([^<]*)</span></div>', doc)]


ODD_LINE_ENDS = b"\xef\xbb\xbf# Clinic notes\r\n\r\nThe clinic opens at nine.\rBring the forms.\r\nAsk at the desk.\n"


def test_the_text_shown_is_the_text_check_read(tmp_path):
    """A byte-order mark, CRLF and lone CR line ends: the page shows the lines the read stage read, one for one."""
    path = tmp_path / "notes.md"
    path.write_bytes(ODD_LINE_ENDS)
    result = audit_paths([str(path)])
    assert not result.files[0].findings, "nothing marked: every line is shown as plain text"
    read = "".join(chunk for chunk, _ in read_chunks(Source(str(path), path, True), 1 << 20))
    assert _shown_lines(page(result)) == read.split("\n")[:-1]
    assert _shown_lines(page(result))[:3] == ["# Clinic notes", "", "The clinic opens at nine."]


@pytest.mark.parametrize(
    ("raw", "why"),
    [(b"caf\xe9 au lait\n", "not UTF-8"), ("Notes\n".encode("utf-16"), "UTF-16"), (b"a\x00b\n", "NUL")],
)
def test_text_check_could_not_read_is_not_shown(tmp_path, raw, why):
    path = tmp_path / "odd.md"
    path.write_bytes(raw)
    result = audit_paths([str(path)])
    assert result.files[0].error, why
    doc = page(result)
    assert 'id="f1-L1"' not in doc and "Error: " in doc


def test_a_report_changed_since_the_audit_shows_the_text_that_was_audited(tmp_path):
    """Bytes written after `check` read the file are never read: the page shows what its findings were made from."""
    path = tmp_path / "notes.md"
    path.write_bytes(ODD_LINE_ENDS)
    result = audit_paths([str(path)])
    path.write_bytes(b"The clinic opens at nine \xff.\n")
    doc = page(result)
    assert (
        'id="f1-L1"' in doc and "Bring the forms." in doc and "nine \ufffd" not in doc and "cannot be shown" not in doc
    )


def test_the_source_lines_keep_their_numbers_and_text(repo):
    doc = Page(audit(repo, "uncited_dosing.md"))
    lines = (repo / "uncited_dosing.md").read_text(encoding="utf-8").splitlines()
    for number in range(1, len(lines) + 1):
        doc.by_id(f"f1-L{number}")
    with pytest.raises(AssertionError):
        doc.by_id(f"f1-L{len(lines) + 1}")
    plain = doc.plain
    for line in lines:
        assert all(word in plain for word in line.split())


def test_a_report_from_stdin_lists_its_findings_without_its_text(repo):
    proc = run_cli("check", "-", "--format", "html", input=HOSTILE, cwd=repo)
    doc = Page(proc.stdout)
    assert_inert(doc)
    assert "Read from stdin" in doc.plain
    assert "“Aspirin reduces the risk of stroke by 20% in adults" in doc.plain, "the sentence, as there is no text"
    assert "Fix: " in doc.plain
    assert [a for a in doc.all("li") if a.get("class") == "frow"]


def test_the_page_is_the_same_bytes_each_run(repo):
    assert audit(repo, "uncited_dosing.md") == audit(repo, "uncited_dosing.md")


def test_suppressed_findings_are_counted_and_listed_when_asked(repo):
    text = "<!-- clinaudit-disable-next-line uncited-claim -- reviewed -->\nAspirin reduces stroke risk by 20%.\n"
    (repo / "s.md").write_text(text, encoding="utf-8")
    quiet = Page(audit(repo, "s.md"))
    assert "1 suppressed finding, listed with --show-suppressed" in quiet.plain
    proc = run_cli("check", "s.md", "--format", "html", "--show-suppressed", cwd=repo)
    shown = Page(proc.stdout)
    assert "Suppressed" in shown.plain and "reviewed" in shown.plain


def _luminance(colour: str) -> float:
    channels = [int(colour[k : k + 2], 16) / 255 for k in (1, 3, 5)]
    r, g, b = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(fg: str, bg: str) -> float:
    light, dark = sorted((_luminance(fg), _luminance(bg)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_every_colour_pair_meets_wcag_aa():
    pairs = dict(PALETTE)
    pairs["link on panel"] = (PALETTE["link"][0], PALETTE["panel"][1])
    pairs["muted on panel"] = (PALETTE["muted"][0], PALETTE["panel"][1])
    for name, (fg, bg) in pairs.items():
        assert contrast(fg, bg) >= 4.5, f"{name}: {contrast(fg, bg):.2f}:1"
    assert contrast("#777777", "#ffffff") < 4.5, "the check can fail"


def test_the_policy_names_the_script_and_style_the_page_holds(tmp_path):
    doc = Page(page(hostile_result(tmp_path)))
    assert f"script-src '{sha256(SCRIPT)}'" in CSP
    assert f"style-src '{sha256(doc.styles[0])}'" in CSP
    render("html", hostile_result(tmp_path), out := __import__("io").StringIO())
    assert out.getvalue() == page(hostile_result(tmp_path))


def test_a_corpus_is_one_page_with_a_record_each(repo):
    lines = [
        {"id": "a1", "answer": "Aspirin reduces the risk of stroke by 20% in adults <script>alert(1)</script>."},
        {"id": "a2", "answer": "Metformin 500 mg twice daily is the usual starting dose (PMID: 29768149)."},
    ]
    (repo / "answers.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    proc = run_cli("check", "answers.jsonl", "--jsonl-text", "answer", "--jsonl-id", "id", "-f", "html", cwd=repo)
    assert proc.returncode in (0, 1), proc.stderr
    doc = Page(proc.stdout)
    assert_inert(doc)
    assert {a["href"] for a in doc.all("a")} >= {"#file-1", "#file-2"}
    assert "answers.jsonl#a1" in doc.plain and "answers.jsonl#a2" in doc.plain
    assert doc.plain.count("A corpus record") == 2
    assert "“Aspirin reduces the risk of stroke by 20% in adults" in doc.plain, "its sentence, as there is no text"

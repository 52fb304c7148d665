"""`--format html` in a real headless Chromium (Debian's `chromium`, driven by Playwright): what a reader does.

The page is opened from a file:// URL, as a CI artifact is. Without /usr/bin/chromium these
tests skip with one line saying what to install, except with CLINAUDIT_REQUIRE_BROWSER=1 or
CLINAUDIT_REQUIRE_SYSTEM=1, where a missing browser fails them: .ci/run installs it and sets
the latter, so there they always run. CI=true alone (GitHub sets it on every job) skips
(tests/helpers/system.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from clinaudit.report.formats import html_format

from helpers import samples_repo
from helpers.cli import run_cli
from helpers.system import need, required

CHROMIUM = need("chromium", module=True)  # else the whole module skips in one line saying what to install
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
HOSTILE = """\
# Plan <img src=x onerror="window.__pwned=1;alert(1)">

Aspirin reduces the risk of stroke by 20% in adults <script>window.__pwned=1;alert(1)</script>.
Metformin 500 mg twice daily is the usual dose; see [the label](javascript:window.__pwned=1) and
<a href="javascript:window.__pwned=1" id="evil">this link</a> for more.
</style><style>body{display:none}</style></title></textarea>
<svg onload="window.__pwned=1"></svg><iframe src="javascript:window.__pwned=1"></iframe>
<details open ontoggle="window.__pwned=1"><summary>x</summary></details>
Statins lower LDL cholesterol by 50% <base href="https://evil.example/"> (PMID: 29768149).
"""


@pytest.fixture(scope="module")
def browser():
    """One Chromium for the module; skipped when there is none (failed where it is required)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        problem = "the playwright package is missing: pip install -e '.[test]'"
        if required("chromium"):
            pytest.fail(problem, pytrace=False)
        pytest.skip(problem)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    return samples_repo(tmp_path, **{"hostile.md": HOSTILE})


def write_page(repo: Path, *paths: str) -> Path:
    out = repo / "report.html"
    proc = run_cli("check", *paths, "--format", "html", "-o", str(out), cwd=repo)
    assert proc.returncode in (0, 1), proc.stderr
    return out


class Opened:
    """A page with what it said: dialogs it opened, requests it made, console messages."""

    def __init__(self, browser, path: Path, javascript: bool = True) -> None:
        self.context = browser.new_context(java_script_enabled=javascript, viewport={"width": 1400, "height": 1000})
        self.page = self.context.new_page()
        self.dialogs: list[str] = []
        self.requests: list[str] = []
        self.console: list[str] = []
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("console", lambda m: self.console.append(m.text))
        self.page.goto(path.as_uri())

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def opened(browser):
    pages: list[Opened] = []

    def open_(path: Path, javascript: bool = True) -> Opened:
        pages.append(Opened(browser, path, javascript))
        return pages[-1]

    yield open_
    for p in pages:
        p.close()


def test_findings_and_citations_are_in_the_dom_and_a_citation_opens_its_record(repo, services, opened, tmp_path):
    seen = opened(write_page(repo, "llm_answer.md", "clean_cited.md", "uncited_dosing.md"))
    page = seen.page
    assert page.locator("li.frow").count() == 20
    assert page.locator("section.file").count() == 3
    assert page.locator("nav[aria-label=Files] a").count() == 3
    assert page.locator("mark.hl-high").count() >= 3
    statuses = page.locator("details.cite > summary").all_inner_texts()
    assert any("verified" in s and "✓" in s for s in statuses) and any("retracted" in s for s in statuses)
    assert any("not found" in s for s in statuses)
    citation = page.locator("#f2-ci0")  # clean_cited.md's first: PMID 29768149, verified
    card = citation.locator(".card")
    assert not card.is_visible()
    citation.locator("summary").click()
    assert card.is_visible()
    assert "Inhaled Combined Budesonide-Formoterol as Needed in Mild Asthma." in card.inner_text()
    assert "2018" in card.inner_text()
    # a keyboard: Tab to a citation and its record shows; Tab on and it goes; Enter keeps it open
    tab_to(page, "f2-ci2")
    assert page.locator("#f2-ci2 .card").is_visible(), "keyboard focus opens the record"
    assert page.evaluate("document.getElementById('f2-ci2').open") is False
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement !== document.body"), "focus moved on, not lost"
    assert not page.evaluate("document.getElementById('f2-ci2').contains(document.activeElement)"), "not into it"
    assert not page.locator("#f2-ci2 .card").is_visible()
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    assert page.locator("#f2-ci2 .card").is_visible(), "Enter keeps it open"
    # the summary's link takes the reader to the finding on its line
    page.locator("li.frow a").first.click()
    assert page.evaluate("location.hash").startswith("#f1-x")
    assert screenshot(page, tmp_path).read_bytes().startswith(b"\x89PNG")
    assert [u for u in seen.requests if not u.startswith("file://")] == [], "the page loads nothing"
    assert seen.dialogs == []


def tab_to(page, ident: str) -> None:
    """Press Tab until the summary of the <details> `ident` has the focus, as a keyboard user would."""
    page.locator("body").click(position={"x": 1, "y": 1})
    for _ in range(400):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.parentElement && document.activeElement.parentElement.id") == ident:
            return
    raise AssertionError(f"Tab never reaches #{ident}")


def screenshot(page, tmp_path: Path) -> Path:
    """The page as a reader sees it, kept in $CLINAUDIT_ARTIFACTS (CI uploads it), else in the test's folder."""
    folder = Path(os.environ.get("CLINAUDIT_ARTIFACTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "html-report.png"
    page.screenshot(path=str(path))
    return path


def test_the_filters_hide_low_findings(repo, opened):
    seen = opened(write_page(repo, "uncited_dosing.md", "clean_cited.md"))
    page = seen.page
    assert page.locator("#filters").is_visible(), "shown once the script runs"
    low = page.locator("li.frow[data-sev=low]")
    high = page.locator("li.frow[data-sev=high]")
    assert low.count() > 0 and high.count() > 0
    assert not low.first.is_visible(), "low findings are collapsed by section"
    for k in range(page.locator("details.lows").count()):
        page.locator("details.lows > summary").nth(k).click()
    assert low.first.is_visible()
    total = page.locator("li.frow").count()
    assert page.locator("#shown").inner_text() == f"{total} of {total} findings shown"
    page.locator("#filters input[name=sev][value=low]").uncheck()
    for k in range(low.count()):
        assert not low.nth(k).is_visible()
    assert not page.locator("details.fbadge[data-sev=low]").first.is_visible(), "their badges on the lines too"
    assert high.first.is_visible()
    assert page.locator("#shown").inner_text() == f"{total - low.count()} of {total} findings shown"
    page.locator("#filters input[name=rule][value=uncited-claim]").uncheck()
    assert page.locator("li.frow[data-rule=uncited-claim]:visible").count() == 0
    assert page.locator("li.frow[data-rule=no-sources]").first.is_visible()
    page.locator("#filters input[name=sev][value=low]").check()
    page.locator("#filters input[name=rule][value=uncited-claim]").check()
    assert low.first.is_visible()


def test_a_hostile_report_never_runs_its_script(repo, opened):
    seen = opened(write_page(repo, "hostile.md", "uncited_dosing.md"))
    page = seen.page
    page.wait_for_load_state("load")
    for k in range(page.locator("details").count()):  # open all: a handler that waits for a toggle gets its chance
        page.locator("details").nth(k).evaluate("d => d.open = true")
    page.mouse.move(300, 300)
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert seen.dialogs == []
    assert page.locator("script").count() == 1
    assert page.locator("body").is_visible(), "its </style> did not end the page's style"
    assert page.evaluate("document.baseURI") == (repo / "report.html").as_uri(), "its <base> is text"
    assert page.locator("#evil").count() == 0 and page.locator("iframe, img, svg").count() == 0
    text = page.locator("#file-1").inner_text()
    assert "<script>window.__pwned=1;alert(1)</script>" in text
    assert [m for m in seen.console if "Content Security Policy" in m] == [], "escaping, not the policy, stopped it"
    assert [u for u in seen.requests if not u.startswith("file://")] == []


def test_the_policy_blocks_a_script_that_got_in_anyway(repo, opened, tmp_path):
    """Defence in depth: a script the renderer did not write is refused by the page's policy."""
    text = write_page(repo, "uncited_dosing.md").read_text(encoding="utf-8")
    injected = tmp_path / "injected.html"
    injected.write_text(
        text.replace("<body>", '<body><script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">', 1),
        encoding="utf-8",
    )
    seen = opened(injected)
    assert seen.page.evaluate("typeof window.__pwned") == "undefined"
    assert [m for m in seen.console if "Content Security Policy" in m], "the policy refused them"
    assert seen.page.locator("#filters").is_visible(), "while the page's own script runs"


def test_reading_works_without_javascript(repo, services, opened):
    seen = opened(write_page(repo, "clean_cited.md", "uncited_dosing.md"), javascript=False)
    page = seen.page
    assert not page.locator("#filters").is_visible(), "no filters that could not filter"
    assert page.locator("li.frow").first.is_visible()
    assert page.locator("mark.hl-high").first.is_visible()
    citation = page.locator("#f1-ci0")
    citation.locator("summary").click()
    assert citation.locator(".card").is_visible()
    assert "Inhaled Combined" in citation.locator(".card").inner_text()


TRIAGE = """\
# Stroke plan

## Treatment

Give alteplase 0.9 mg/kg intravenously within 4.5 hours of onset.

Alteplase is contraindicated in patients with active internal bleeding.

As-needed budesonide-formoterol reduces severe exacerbations in mild asthma (PMID: 29768149).

## Monitoring

Check blood pressure every 15 minutes. Monitor neurological status hourly.

Patients often feel tired after a stroke. Most recover some function within months.

## Follow-up

Aspirin reduces the risk of recurrent stroke by 20% (PMID: 10066780).

Most patients regain some walking ability within six months of a stroke.
"""


def _triage_page(repo: Path, opened, width: int = 1400):
    (repo / "triage.md").write_text(TRIAGE, encoding="utf-8")
    seen = opened(write_page(repo, "triage.md"))
    seen.page.set_viewport_size({"width": width, "height": 900})
    return seen.page


def _rows(page) -> list[tuple[str, int]]:
    """(severity, line) of each row of the findings list, in page order."""
    return [
        (row.get_attribute("data-sev"), int((row.locator("a").first.text_content() or "").split(":")[0]))
        for row in page.locator("li.frow").all()
    ]


RANK = {"high": 3, "medium": 2, "low": 1, "info": 0}


def test_the_findings_list_puts_the_worst_first_and_shows_each_sentence(repo, services, opened):
    page = _triage_page(repo, opened)
    rows = _rows(page)
    assert rows[0][0] == "high" and {s for s, _ in rows} >= {"high", "medium", "low"}
    assert rows == sorted(rows, key=lambda r: (-RANK[r[0]], r[1])), "by severity, then by line"
    first = page.locator("li.frow").first
    assert first.is_visible()
    assert "“Give alteplase 0.9 mg/kg intravenously within 4.5 hours of onset.”" in first.inner_text()


def test_low_findings_are_grouped_by_section_and_collapsed(repo, services, opened):
    page = _triage_page(repo, opened)
    groups = page.locator("details.lows")
    names = groups.locator("> summary").all_inner_texts()
    assert any("Monitoring" in n for n in names) and any("Follow-up" in n for n in names), names
    assert all(not g.evaluate("d => d.open") for g in groups.all())
    monitoring = groups.filter(has_text="Monitoring")
    row = monitoring.locator("li.frow").first
    assert not row.is_visible()
    monitoring.locator("> summary").click()
    assert row.is_visible()
    lines = [int(a.split(":")[0]) for a in monitoring.locator("li.frow > a").all_text_contents()]
    assert lines and all(13 <= n <= 15 for n in lines), "only the lines under its heading"


def test_a_line_with_a_high_and_a_medium_mark_shows_the_high_colour(repo, services, opened):
    page = _triage_page(repo, opened)
    line = page.locator("#f1-L5")  # the dose: uncited (high) and without a disclaimer (medium)
    assert sorted(line.locator("mark").evaluate_all("ms => ms.map(m => m.dataset.sev)")) == ["high", "medium"]
    # what the reader sees on the words: the innermost mark's background
    seen = line.locator(".tx").evaluate(
        """tx => { const r = [...tx.querySelectorAll('mark')].pop().getBoundingClientRect();
        let el = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        while (el && el.tagName !== 'MARK') el = el.parentElement;
        return getComputedStyle(el).backgroundColor; }"""
    )
    assert seen == _rgb(html_format.PALETTE["hl-high"][1])
    number = line.locator(".no").evaluate("n => getComputedStyle(n).backgroundColor")
    assert number == _rgb(html_format.PALETTE["sev-high"][1]), "the line's number takes the worst colour"


def test_on_a_narrow_screen_the_summary_and_high_findings_come_before_the_text(repo, services, opened):
    page = _triage_page(repo, opened, width=400)
    top = lambda sel: page.locator(sel).first.evaluate("e => e.getBoundingClientRect().top + window.scrollY")  # noqa: E731
    text = top(".src")
    assert top("#summary-h") < text and top("li.frow[data-sev=high]") < text
    assert top(".sum-rest") > text, "the medium and low findings and the counts follow the text"
    wide = _triage_page(repo, opened, width=1400)
    assert wide.locator(".sum-rest").first.evaluate("e => e.getBoundingClientRect().left") < 500, "beside it, wide"


def _rgb(colour: str) -> str:
    r, g, b = (int(colour[k : k + 2], 16) for k in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"

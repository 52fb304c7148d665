"""One self-contained HTML page: the report's own text with its findings and citations marked on it.

A reviewer reads the audit beside the document, so the page shows the document: every
line with its number, each finding highlighted where it stands (a badge with an icon and
the severity in words, never colour alone), each citation followed by its status, and a
click or a key press on either opens what is known (`<details>`, so reading needs no
JavaScript). A summary panel gives the verdict, the coverage, the counts by severity and
by rule, and a link to every finding; its checkboxes are the page's only script, and they
only hide findings.

Everything a report contributes is escaped by `esc` (the text, its file name, the
records the databases returned): a hostile report stays text. The page loads nothing:
CSS and the one script are inline, and a Content-Security-Policy allows exactly those two
(by their hashes, so the page is the same bytes each run) and nothing else.

The page shows the text the audit read, carried on each FileReport (`_source`), never the
path read again; a report from stdin, one read as a stream (over 8 MB) or a corpus record
carries none, and its page lists the findings alone.
"""

from __future__ import annotations

import base64
import bisect
import hashlib
import html
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from functools import cached_property, lru_cache
from typing import NamedTuple, TextIO

from clinaudit.core.models import (
    AuditResult,
    CitationKind,
    CitationResult,
    FileReport,
    Finding,
    MetadataResult,
    Record,
    Severity,
    Status,
    TopicResult,
    distinct_works,
)
from clinaudit.core.text import counted, printable, shown, thousands
from clinaudit.read import structure
from clinaudit.report.formats import View
from clinaudit.report.formats._common import coverage_text, shown_path

MAX_SOURCE_BYTES = 8 << 20  # a larger report is listed, not shown: a page of millions of lines helps no one


def esc(text: object) -> str:
    """Report text as HTML text or attribute value: `& < > " '` as entities, controls and bidi marks written out.

    A newline becomes a space, as HTML would show it: no line of the file starts with a
    report's words, so a CI log that prints the artifact cannot read one as a command.
    """
    text = str(text)
    if _MARKUP.search(text) is None:  # nothing for html.escape to do: printable writes controls out in plain ASCII
        return printable(text)
    return html.escape(printable(text).replace("\n", " "), quote=True)


@lru_cache(maxsize=4096)
def esc_line(text: str) -> str:
    """As `esc`, on one line: a newline or tab in a name is written out too. Cached: a page writes each rule and
    citation id several times."""
    if _MARKUP_IN_LINE.search(text) is None:  # as in `esc`: the commonest name needs no entity
        return shown(text)
    return html.escape(shown(text), quote=True)


_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")  # an ATX heading: what groups low findings
_MARKUP = re.compile("[&<>\"'\n]")  # what `esc` changes besides what `printable` writes out
_MARKUP_IN_LINE = re.compile("[&<>\"']")


# ---------------------------------------------------------------- what each mark looks like

# WCAG AA asks 4.5:1 for text; every pair is checked by tests/report/test_html_format.py.
PALETTE: dict[str, tuple[str, str]] = {  # name -> (text colour, background)
    "page": ("#1a1a1a", "#ffffff"),
    "panel": ("#1a1a1a", "#f4f5f7"),
    "muted": ("#4a4a4a", "#ffffff"),
    "lineno": ("#555555", "#f4f5f7"),
    "link": ("#0b57d0", "#ffffff"),
    "good": ("#0a5c2b", "#e3f3e8"),
    "bad": ("#8c1d18", "#fde7e6"),
    "warn": ("#6b4500", "#fff1cc"),
    "neutral": ("#3d3d3d", "#ececec"),
    "sev-high": ("#8c1d18", "#fde7e6"),
    "sev-medium": ("#6b4500", "#fff1cc"),
    "sev-low": ("#174a85", "#e4effb"),
    "sev-info": ("#3d3d3d", "#ececec"),
    "hl-high": ("#1a1a1a", "#f9d3d0"),  # the highlighted text itself, under the badge
    "hl-medium": ("#1a1a1a", "#fbe3a4"),
    "hl-low": ("#1a1a1a", "#d6e6fa"),
    "hl-info": ("#1a1a1a", "#e6e6e6"),
}

SEVERITY_ICON = {"high": "▲", "medium": "◆", "low": "●", "info": "ℹ"}
UNDERLINE = {"high": "solid", "medium": "dashed", "low": "dotted", "info": "dotted"}  # a cue besides colour


class Look(NamedTuple):
    icon: str
    label: str
    tone: str  # good | bad | warn | neutral


STATUS_LOOK: dict[Status, Look] = {
    Status.VERIFIED: Look("✓", "verified", "good"),
    Status.UNCHECKED: Look("○", "unchecked", "neutral"),
    Status.NOT_FOUND: Look("✗", "not found", "bad"),
    Status.RETRACTED: Look("⊘", "retracted", "bad"),
    Status.CONCERN: Look("⚠", "expression of concern", "warn"),
    Status.WITHDRAWN: Look("⊘", "withdrawn", "bad"),
    Status.RETIRED: Look("⊘", "retired", "warn"),
    Status.UNVERIFIABLE: Look("?", "unverifiable", "warn"),
    Status.INVALID: Look("✗", "invalid", "bad"),
    Status.MISMATCHED: Look("≠", "mismatched", "bad"),
    Status.OFF_TOPIC: Look("↷", "off topic", "bad"),
    Status.UNGROUNDED: Look("∅", "ungrounded", "bad"),
    Status.UNRESOLVED: Look("?", "unresolved", "warn"),
}
VERDICT_LOOK = {"pass": Look("✓", "PASS", "good"), "fail": Look("✗", "FAIL", "bad"), "error": Look("⚠", "ERROR", "bad")}


def _css() -> str:
    p = PALETTE
    rules = [
        f"body{{margin:0;font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;"
        f"color:{p['page'][0]};background:{p['page'][1]}}}",
        f"a{{color:{p['link'][0]}}}a:focus-visible,summary:focus-visible{{outline:3px solid {p['link'][0]};"
        "outline-offset:1px}",
        "header{padding:.8em 1.2em;border-bottom:1px solid #c8c8c8}header h1{margin:0;font-size:1.3em}",
        "main{display:block}",
        f"#summary{{padding:1em 1.2em;background:{p['panel'][1]};color:{p['panel'][0]}}}",
        "@media (min-width:75em){main{display:grid;grid-template-columns:26em minmax(0,1fr)}"
        "#summary{position:sticky;top:0;align-self:start;max-height:100vh;overflow:auto;box-sizing:border-box}}",
        # a narrow screen: the verdict, the counts and the high findings, then the text, then the rest
        "@media (max-width:74.99em){main{display:flex;flex-direction:column}#summary{display:contents}"
        f".sum-head,.sum-rest{{padding:1em 1.2em;background:{p['panel'][1]};color:{p['panel'][0]}}}"
        ".sum-head{order:0}.docs{order:1}.sum-rest{order:2}}",
        "details.lows{margin:.3em 0}details.lows>summary{cursor:pointer}",
        f".said{{color:{p['muted'][0]}}}",
        "#summary h2{font-size:1.1em;margin:.2em 0 .5em}#summary h3{font-size:1em;margin:1em 0 .3em}",
        "table.counts{border-collapse:collapse}table.counts td,table.counts th{padding:.1em .6em .1em 0;"
        "text-align:left}table.counts td.n{text-align:right}",
        "fieldset{border:1px solid #b0b0b0;margin:.8em 0;padding:.3em .7em}legend{font-weight:600}",
        "fieldset label{display:inline-block;margin-right:.9em}",
        "ol.findings{padding-left:1.6em;margin:.3em 0}ol.findings li{margin:.25em 0}",
        "ol.files{padding-left:1.6em}",
        ".docs{padding:0 1.2em 2em;min-width:0}",
        "section.file{margin-top:1.2em}section.file h2{font-size:1.15em;margin:.4em 0;overflow-wrap:anywhere}",
        f".meta{{color:{p['muted'][0]}}}",
        ".badge,.status{display:inline-block;padding:0 .35em;border:1px solid;border-radius:.3em;font-size:.88em;"
        "font-weight:600;white-space:nowrap;line-height:1.35}",
        "code,.src{font-family:ui-monospace,'DejaVu Sans Mono',Menlo,Consolas,monospace}",
        ".src{font-size:13px;border:1px solid #c8c8c8;border-radius:.3em;margin:.6em 0}",
        ".ln{display:flex;min-height:1.45em}",
        f".ln .no{{flex:0 0 4.2em;text-align:right;padding-right:.7em;color:{p['lineno'][0]};"
        f"background:{p['lineno'][1]};text-decoration:none;user-select:none}}",
        ".ln .tx{flex:1;white-space:pre-wrap;overflow-wrap:anywhere;padding-left:.6em;position:relative;min-width:0}",
        ".ln:target{outline:2px solid #0b57d0}",
        "mark{color:inherit;padding:0}",
        "details.pop{display:inline-block;font-family:system-ui,sans-serif}",
        "details.pop>summary{display:inline;cursor:pointer;list-style:none}",
        "details.pop>summary::-webkit-details-marker{display:none}",
        ".card{display:block;white-space:normal;font-family:system-ui,sans-serif;font-size:14px;"
        f"background:{p['page'][1]};color:{p['page'][0]};border:1px solid #8a8a8a;border-radius:.4em;"
        "padding:.5em .8em;margin:.3em 0;max-width:46em;box-shadow:0 2px 8px rgba(0,0,0,.18)}",
        "details.pop[open]>.card{position:absolute;left:.6em;z-index:5}",
        # keyboard focus opens a record with no script: a closed <details> keeps its content in
        # ::details-content, shown here while its summary has keyboard focus (a mouse click toggles as
        # always). Its own rule: a browser that does not know the pseudo-element drops only this one,
        # and there Enter opens the record.
        "details.pop:has(>summary:focus-visible)::details-content{content-visibility:visible}",
        "details.pop:has(>.card :focus)::details-content{content-visibility:visible}",
        "details.pop:has(>summary:focus-visible)>.card,details.pop:has(>.card :focus)>.card"
        "{position:absolute;left:.6em;z-index:5}",
        ".card dl{display:grid;grid-template-columns:max-content 1fr;gap:.15em .8em;margin:.3em 0}",
        ".card dt{font-weight:600}.card dd{margin:0;overflow-wrap:anywhere}",
        ".card ul{margin:.2em 0;padding-left:1.2em}",
        "ul.cites{list-style:none;padding:0}ul.cites>li{margin:.3em 0}",
        "ul.cites details>summary{cursor:pointer}",
        "ul.cites .card{box-shadow:none}",
        ".filtered.frow,.filtered.fbadge,.filtered.lows{display:none}",
        "mark.filtered{background:transparent!important;border-bottom-color:transparent!important}",
        ".note{padding:.4em .7em;border-left:4px solid #8a8a8a;background:#f4f5f7}",
        ".sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}",
        "@media print{#filters{display:none}details.pop[open]>.card{position:static}}",
    ]
    for tone in ("good", "bad", "warn", "neutral"):
        fg, bg = p[tone]
        rules.append(f".t-{tone}{{color:{fg};background:{bg};border-color:{fg}}}")
        rules.append(f".cited.t-{tone}{{background:none;color:inherit;border-bottom:2px solid {fg}}}")
    for sev in ("high", "medium", "low", "info"):
        fg, bg = p[f"sev-{sev}"]
        rules.append(f".sev-{sev}{{color:{fg};background:{bg};border-color:{fg}}}")
        hl_fg, hl_bg = p[f"hl-{sev}"]
        rules.append(f"mark.hl-{sev}{{color:{hl_fg};background:{hl_bg};border-bottom:2px {UNDERLINE[sev]} {fg}}}")
        rules.append(f".ln.w-{sev} .no{{color:{fg};background:{bg}}}")
    return "".join(rules)


# Progressive: without a script the filters stay hidden and every finding shows. Static text, so its
# hash in the policy is a constant: the page is byte-identical from run to run.
SCRIPT = """(function(){
var box=document.getElementById('filters');if(!box)return;box.hidden=false;
var marked=document.querySelectorAll('[data-sev]'),rows=document.querySelectorAll('li.frow'),
shown=document.getElementById('shown');
function apply(){var off={};box.querySelectorAll('input[type=checkbox]').forEach(function(c){
if(!c.checked)off[c.name+'\\u0000'+c.value]=true;});var n=0;
marked.forEach(function(el){var hide=off['sev\\u0000'+el.dataset.sev]||off['rule\\u0000'+el.dataset.rule];
el.classList.toggle('filtered',!!hide);});
rows.forEach(function(el){if(!el.classList.contains('filtered'))n++;});
if(shown)shown.textContent=n+' of '+rows.length+' findings shown';}
box.addEventListener('change',apply);apply();})();"""

CSS = _css()


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


CSP = (
    f"default-src 'none'; style-src '{_sha256(CSS)}'; script-src '{_sha256(SCRIPT)}'; "
    "img-src 'none'; font-src 'none'; connect-src 'none'; base-uri 'none'; form-action 'none'"
)


# ---------------------------------------------------------------- the page


def render(result: AuditResult, out: TextIO, view: View = View()) -> None:
    """The page written part by part, a line of the text at a time: joined first, 1.2 MB of cited ids made a
    page of 155 MB held three times over (its parts, the page, its bytes)."""
    for part in parts(result, view):
        out.write(part)


def page(result: AuditResult, view: View = View()) -> str:
    """The whole document, as one string."""
    return "".join(parts(result, view))


def parts(result: AuditResult, view: View = View()) -> Iterator[str]:
    """The document's text in order, in parts."""
    files = [_FileView(k, report) for k, report in enumerate(result.files, 1)]
    verdict = VERDICT_LOOK.get(result.verdict, Look("", result.verdict.upper(), "neutral"))
    title = f"clinaudit: {verdict.label}, {counted(len(files), 'file')}"
    if len(files) == 1:
        title += f" ({shown_path(files[0].report.path)})"
    yield from [
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{html.escape(CSP, quote=True)}">',
        '<meta name="referrer" content="no-referrer">',
        '<meta name="viewport" content="width=device-width,initial-scale=1">',
        f"<title>{esc_line(title)}</title><style>{CSS}</style></head><body>",
        f'<header><h1>clinaudit audit: <span class="badge t-{verdict.tone}">'
        f'<span aria-hidden="true">{verdict.icon}</span> {verdict.label}</span></h1></header>',
        "<main>",
    ]
    yield from _summary(result, files, view)
    yield '<div class="docs">'
    for f in files:
        yield from f.parts()
    yield "</div></main>"
    yield f"<script>{SCRIPT}</script></body></html>\n"


def _summary(result: AuditResult, files: list[_FileView], view: View) -> Iterator[str]:
    """The side panel: the verdict and counts first, then every finding linked to where it stands.

    In parts, a finding's row each: joined first, 10 MB of uncited claims made a panel of
    hundreds of megabytes before a byte of it was written.
    """
    findings = [(f, finding, k) for f in files for k, finding in enumerate(f.report.findings)]
    severities = Counter(finding.severity.value for _, finding, _ in findings)
    rules = Counter(finding.rule for _, finding, _ in findings)
    ordered = sorted(findings, key=lambda t: (-t[1].severity.rank, t[0].number, t[1].order()))
    del findings
    several = len(files) > 1
    # what a narrow screen shows before the text (`sum-head`), and after it (`sum-rest`)
    yield '<aside id="summary" aria-labelledby="summary-h"><div class="sum-head"><h2 id="summary-h">Summary</h2>'
    yield _overview(result, files, len(ordered))
    yield _severity_counts(severities)
    if ordered:
        yield _filters(severities, rules)
    if several:
        yield from _file_index(files)
    yield from _findings_first(ordered, several)
    yield '</div><div class="sum-rest">'
    yield from _findings_rest(ordered, several)
    yield _rule_counts(rules)
    yield _status_counts(Counter(c.status for f in files for c in distinct_works(f.report.citations)))
    yield from _suppressed_list(files, view.show_suppressed)
    yield "</div></aside>"


def _overview(result: AuditResult, files: list[_FileView], findings: int) -> str:
    """The verdict, the counts and the coverage: the panel's answer before any detail."""
    verdict = VERDICT_LOOK.get(result.verdict, Look("", result.verdict.upper(), "neutral"))
    share = result.coverage
    citations = sum(len(distinct_works(f.report.citations)) for f in files)
    suppressed = f" · {thousands(len(result.suppressed))} suppressed" if result.suppressed else ""
    if share is None:
        coverage = "no claims"
    else:
        grounded = sum(r.grounded_claims for r in result.files)
        claims = sum(r.claims for r in result.files)
        with_table = result.linked_coverage
        coverage = (
            f"<strong>{share:g}%</strong> ({thousands(grounded)} of {thousands(claims)} claims cited)"
            if with_table is None
            else f"<strong>{share:g}%</strong> inline, <strong>{with_table:g}%</strong> with the evidence table "
            f"({thousands(grounded)} of {thousands(claims)} claims cited inline, {thousands(result.linked_claims)} by the evidence table)"
        )
    return (
        f'<p>Verdict: <span class="badge t-{verdict.tone}"><span aria-hidden="true">{verdict.icon}</span> '
        f"{verdict.label}</span></p>"
        f"<p>{counted(len(files), 'file')} · {counted(findings, 'finding')} · {counted(citations, 'citation')}"
        f"{suppressed}</p><p>Coverage: {coverage}</p>"
        + (f'<p class="meta">{esc(left_out)}</p>' if (left_out := structure.note(result.not_claims)) else "")
    )


def _severity_counts(severities: Counter[str]) -> str:
    """Findings by severity, every severity shown (info only when there is one): a zero says something too."""
    rows = "".join(
        f'<tr><td><span class="badge sev-{s.value}"><span aria-hidden="true">{SEVERITY_ICON[s.value]}</span> '
        f'{s.value}</span></td><td class="n">{thousands(severities[s.value])}</td></tr>'
        for s in Severity
        if s is not Severity.INFO or severities[s.value]
    )
    return f'<h3>By severity</h3><table class="counts"><tbody>{rows}</tbody></table>'


def _rule_counts(rules: Counter[str]) -> str:
    """Findings by rule, the commonest first: which kind of problem the report has most of."""
    if not rules:
        return ""
    rows = "".join(
        f'<tr><td><code>{esc_line(rule)}</code></td><td class="n">{thousands(count)}</td></tr>'
        for rule, count in sorted(rules.items(), key=lambda kv: (-kv[1], kv[0]))
    )
    return f'<h3>By rule</h3><table class="counts"><tbody>{rows}</tbody></table>'


def _status_counts(statuses: Counter[Status]) -> str:
    """Distinct works by status, the commonest first; none when nothing is cited."""
    if not statuses:
        return ""
    rows = "".join(
        f"<tr><td>{_status_badge(status)}</td><td class='n'>{thousands(count)}</td></tr>"
        for status, count in sorted(statuses.items(), key=lambda kv: (-kv[1], kv[0].value))
    )
    return f'<h3>Citations by status</h3><table class="counts"><tbody>{rows}</tbody></table>'


def _file_index(files: list[_FileView]) -> Iterator[str]:
    """Links to each report's section with its verdict, for a page of several reports."""
    yield '<h3>Files</h3><nav aria-label="Files"><ol class="files">'
    for f in files:
        look = _file_verdict(f.report)
        yield (
            f'<li><a href="#{f.anchor}"><code>{esc_line(shown_path(f.report.path))}</code></a> '
            f'<span class="badge t-{look.tone}"><span aria-hidden="true">{look.icon}</span> {look.label}</span> '
            f"{counted(len(f.report.findings), 'finding')}</li>"
        )
    yield "</ol></nav>"


Listed = tuple["_FileView", Finding, int]  # a finding of the list: its report's view, itself, its place in the report


def _findings_first(ordered: list[Listed], several: bool) -> Iterator[str]:
    """Every finding, the most severe first and then by file and line (`ordered`), each linked to its badge on
    the text (or its report's section) and showing its sentence; the filters count these rows.

    Two parts: the high findings, which a narrow screen shows before the text (these), and the
    rest after it (`_findings_rest`). Each row is made as it is written.
    """
    if not ordered:
        yield '<h3 id="findings-h">Findings</h3><p>No findings.</p>'
        return
    yield '<h3 id="findings-h">Findings</h3><p id="shown" class="meta" aria-live="polite"></p>'
    high = _high_count(ordered)
    if high:
        yield '<ol class="findings" aria-labelledby="findings-h">'
        yield from (_row(ordered[n], several) for n in range(high))
        yield "</ol>"


def _findings_rest(ordered: list[Listed], several: bool) -> Iterator[str]:
    """The findings after the high ones: medium ones one by one, then low and info ones grouped by their
    section and collapsed."""
    high = _high_count(ordered)
    medium = high
    while medium < len(ordered) and ordered[medium][1].severity is Severity.MEDIUM:
        medium += 1
    if medium > high:
        yield f'<ol class="findings" start="{high + 1}" aria-label="Medium findings">'
        yield from (_row(ordered[n], several) for n in range(high, medium))
        yield "</ol>"
    groups: dict[tuple[int, int, str], list[int]] = {}  # (-rank, file, section) -> places in `ordered`
    for n in range(medium, len(ordered)):  # in order already: low before info, then by file and line
        f, finding, k = ordered[n]
        groups.setdefault((-finding.severity.rank, f.number, f.section_of(k)), []).append(n)
    at = medium + 1
    for (_, _, section), rows in groups.items():
        first = ordered[rows[0]]
        worst = first[1].severity.value
        where = f"{shown_path(first[0].report.path)}: " if several else ""
        yield (
            f'<details class="lows" data-sev="{worst}"><summary>{_severity_badge(worst)} '
            f"{esc_line(where)}{esc_line(section)} · {counted(len(rows), worst + ' finding')}</summary>"
            f'<ol class="findings" start="{at}">'
        )
        yield from (_row(ordered[n], several) for n in rows)
        yield "</ol></details>"
        at += len(rows)


def _high_count(ordered: list[Listed]) -> int:
    """How many of the findings, the most severe first, are high."""
    n = 0
    while n < len(ordered) and ordered[n][1].severity is Severity.HIGH:
        n += 1
    return n


def _row(item: Listed, several: bool) -> str:
    """One finding of the list: its badge, its place, its rule, its message and the sentence it is about."""
    f, finding, k = item
    where = f"{shown_path(f.report.path)}:" if several else ""
    said = (
        f' <span class="said">“{esc(trimmed(finding.sentence))}”</span>' if finding.sentence and k in f.placed else ""
    )
    return (
        f'<li class="frow" data-sev="{finding.severity.value}" data-rule="{esc_line(finding.rule)}">'
        f"{_severity_badge(finding.severity.value)} "
        f'<a href="#{f.finding_target(k)}">{esc_line(where)}{finding.span.line}:{finding.span.column}</a> '
        f"<code>{esc_line(finding.rule)}</code> {esc(finding.message)}{said}{f.unplaced_detail(k)}</li>"
    )


SENTENCE_SHOWN = 140  # characters of a finding's sentence in the list; the text itself shows it whole


def trimmed(sentence: str, most: int = SENTENCE_SHOWN) -> str:
    """A sentence on one line, cut at a word to at most `most` characters, an ellipsis where it was cut."""
    sentence = " ".join(sentence.split())
    if len(sentence) <= most:
        return sentence
    return sentence[: most - 1].rsplit(" ", 1)[0].rstrip(" ,;:") + "…"


def _suppressed_list(files: list[_FileView], show: bool) -> Iterator[str]:
    """Suppressed findings with their reasons when asked for (--show-suppressed), else only how many there are."""
    count = sum(len(f.report.suppressed) for f in files)
    if not count:
        return
    if not show:
        yield f"<p class='meta'>{counted(count, 'suppressed finding')}, listed with --show-suppressed.</p>"
        return
    yield '<h3>Suppressed</h3><ol class="findings">'
    for f in files:
        for s in f.report.suppressed:
            yield (
                f"<li>{_severity_badge(s.finding.severity.value)} "
                f'<a href="#{f.line_anchor(s.finding.span.line)}">{s.finding.span.line}:{s.finding.span.column}</a> '
                f"<code>{esc_line(s.finding.rule)}</code> {esc(s.finding.message)} "
                f'<span class="meta">({esc_line(s.kind)}{": " + esc(s.reason) if s.reason else ""})</span></li>'
            )
    yield "</ol>"


def _filters(severities: Counter[str], rules: Counter[str]) -> str:
    """Checkboxes that hide findings: `hidden` until the script runs, since without it they would do nothing."""
    out = ['<form id="filters" hidden><fieldset><legend>Show severity</legend>']
    for s in Severity:
        if severities[s.value]:
            out.append(
                f'<label><input type="checkbox" name="sev" value="{s.value}" checked> '
                f'<span aria-hidden="true">{SEVERITY_ICON[s.value]}</span> {s.value} ({thousands(severities[s.value])})</label>'
            )
    out.append("</fieldset><fieldset><legend>Show rule</legend>")
    for rule, count in sorted(rules.items()):
        out.append(
            f'<label><input type="checkbox" name="rule" value="{esc_line(rule)}" checked> {esc_line(rule)} ({thousands(count)})</label>'
        )
    out.append("</fieldset></form>")
    return "".join(out)


def _severity_badge(severity: str) -> str:
    icon = SEVERITY_ICON.get(severity, "")
    return f'<span class="badge sev-{severity}"><span aria-hidden="true">{icon}</span> {severity}</span>'


def _status_badge(status: Status) -> str:
    """A citation's status in words and icon, made once per status: a page shows one for every citation, twice."""
    badge = _STATUS_BADGES.get(status)
    if badge is None:
        look = STATUS_LOOK.get(status, Look("", status.value, "neutral"))
        badge = f'<span class="status t-{look.tone}"><span aria-hidden="true">{look.icon}</span> {look.label}</span>'
        _STATUS_BADGES[status] = badge
    return badge


_STATUS_BADGES: dict[Status, str] = {}


def _file_verdict(report: FileReport) -> Look:
    if report.error:
        return VERDICT_LOOK["error"]
    return VERDICT_LOOK.get(report.verdict, Look("", report.verdict.upper(), "neutral"))


# ---------------------------------------------------------------- one report


class _Range(NamedTuple):
    start: int  # 0-based offsets into the line
    end: int
    open: str
    close: str
    weight: int  # nesting: a heavier range opens inside a lighter one (a finding's severity rank; -1 a citation)


class _Insert(NamedTuple):
    column: int  # 0-based offset into the line
    order: int  # at one offset: a citation's status (it ends the text before) before a finding's badge
    k: int  # which citation or finding of the report: its HTML is made when its line is written


_CITATION, _BADGE = 0, 1  # an insert's order


def _in_order(inserts: Iterable[_Insert], length: int) -> list[_Insert]:
    """A line's inserts in order (a column past the line's end is its end): by column, a citation before a badge
    at one column, and then in the order of their HTML's text, which differs first at the id's number (`x12"`
    before `x3"`): the order the page has always had. One int a key, and a text only where two share a place."""
    ordered = sorted(inserts, key=lambda i: min(i.column, length) * 2 + i.order)  # stable: k ascending within
    start = 0
    while start < len(ordered):
        place = min(ordered[start].column, length), ordered[start].order
        end = start + 1
        while end < len(ordered) and (min(ordered[end].column, length), ordered[end].order) == place:
            end += 1
        if end - start > 1:
            ordered[start:end] = sorted(ordered[start:end], key=lambda i: f'{i.k}"')
        start = end
    return ordered


class _FileView:
    """One report's section: its findings placed on its lines, its citations after their text."""

    def __init__(self, number: int, report: FileReport) -> None:
        self.number = number
        self.report = report
        self.anchor = f"file-{number}"
        self.lines, self.missing = _source(report)
        self.placed: set[int] = set()  # the findings marked on a line (the others link to the section)
        if self.lines is not None:
            for k, finding in enumerate(report.findings):
                if 1 <= finding.span.line <= len(self.lines):
                    self.placed.add(k)

    def section_of(self, k: int) -> str:
        """The heading a finding stands under: the one it carries, else the nearest heading above its line."""
        finding = self.report.findings[k]
        if finding.section:
            return finding.section
        headings = self._headings
        at = bisect.bisect_right(headings, (finding.span.line, "\uffff")) - 1
        return headings[at][1] if at >= 0 else "Before the first heading"

    @cached_property
    def _headings(self) -> list[tuple[int, str]]:
        """(line, heading text) of each Markdown heading of the text, in line order."""
        return [
            (number, m.group(1))
            for number, line in enumerate(self.lines or (), 1)
            if (m := _HEADING.match(line)) is not None and m.group(1)
        ]

    def unplaced_detail(self, k: int) -> str:
        """For a finding not marked on a line (no text to show): the sentence it is about and the fix, in the list."""
        if k in self.placed:
            return ""
        finding = self.report.findings[k]
        out = f": “{esc(finding.sentence)}”" if finding.sentence else ""
        return out + (f' <span class="meta">Fix: {esc(finding.suggestion)}</span>' if finding.suggestion else "")

    def _placed_citation(self, c: CitationResult) -> bool:
        return self.lines is not None and 1 <= c.span.line <= len(self.lines)

    def line_anchor(self, line: int) -> str:
        return f"f{self.number}-L{line}" if self.lines is not None and 1 <= line <= len(self.lines) else self.anchor

    def finding_target(self, k: int) -> str:
        return f"f{self.number}-x{k}" if k in self.placed else self.anchor

    def parts(self) -> Iterator[str]:
        """The report's section, in parts: its head, its text a line at a time, its citations."""
        report = self.report
        look = _file_verdict(report)
        yield from [
            f'<section class="file" id="{self.anchor}" aria-labelledby="{self.anchor}-h">',
            f'<h2 id="{self.anchor}-h"><code>{esc_line(shown_path(report.path))}</code> '
            f'<span class="badge t-{look.tone}"><span aria-hidden="true">{look.icon}</span> {look.label}</span></h2>',
            f'<p class="meta">{_file_meta(report)}</p>',
        ]
        if report.error:
            yield f'<p class="note">Error: {esc(report.error)}</p>'
        if report.note:
            yield f'<p class="note">{esc(report.note)}</p>'
        if self.lines is not None:
            yield from self._source_parts()
        elif self.missing:
            yield f'<p class="note">{esc(self.missing)}</p>'
        if report.citations:  # each item made as it is written
            yield f'<h3>Citations ({thousands(len(report.citations))})</h3><ul class="cites">'
            for k, c in enumerate(report.citations):
                head = f"<code>{esc_line(c.id)}</code> {_status_badge(c.status)}"
                if self._placed_citation(c):  # its record opens where it stands: linked, not written twice
                    yield (
                        f'<li id="f{self.number}-c{k}">{head} <a href="#f{self.number}-ci{k}">line {c.span.line}</a>'
                        f"{_outlink(c)}{self._cited_on(c, ' · cited on ')}</li>"
                    )
                else:
                    yield (
                        f'<li id="f{self.number}-c{k}"><details><summary>{head} line {c.span.line}</summary>'
                        f"{self._card(c, links=True)}</details></li>"
                    )
            yield "</ul>"
        yield "</section>"

    # -- the text

    def _source_parts(self) -> Iterator[str]:
        """The text, a line at a time, its marks on it. Where each mark goes is worked out first; a finding's
        badge and a citation's card are made only when their line is written (made first, 80,000 cited ids held
        every card at once)."""
        lines = self.lines or []
        ranges: dict[int, list[_Range]] = {}
        inserts: dict[int, list[_Insert]] = {}
        worst: dict[int, Severity] = {}  # line -> the most severe finding marked on it
        tags: dict[str, str] = {}  # one copy of each opening tag, however many ranges open with it
        for k, finding in enumerate(self.report.findings):
            if k not in self.placed:
                continue
            span = finding.span
            sev = finding.severity.value
            inserts.setdefault(span.line, []).append(_Insert(max(span.column - 1, 0), _BADGE, k))
            tag = f'<mark class="hl-{sev}" data-sev="{sev}" data-rule="{esc_line(finding.rule)}">'
            tag = tags.setdefault(tag, tag)
            for line, start, end in _covered(span, lines):
                ranges.setdefault(line, []).append(_Range(start, end, tag, "</mark>", finding.severity.rank))
                if line not in worst or worst[line].rank < finding.severity.rank:
                    worst[line] = finding.severity
        for k, c in enumerate(self.report.citations):
            span = c.span
            if not self._placed_citation(c):
                continue
            tone = STATUS_LOOK.get(c.status, Look("", "", "neutral")).tone
            tag = f'<span class="cited t-{tone}">'
            tag = tags.setdefault(tag, tag)
            for line, start, end in _covered(span, lines):
                ranges.setdefault(line, []).append(_Range(start, end, tag, "</span>", -1))
            end_line = min(max(span.end_line, span.line), len(lines))
            at = min(max(span.end_column - 1, 0), len(lines[end_line - 1])) if span.end_line >= span.line else 0
            inserts.setdefault(end_line, []).append(_Insert(at, _CITATION, k))
        yield f'<div class="src" role="region" aria-label="Text of {esc_line(shown_path(self.report.path))}">'
        n = self.number
        for number, text in enumerate(lines, 1):
            marked = f" w-{worst[number].value}" if number in worst else ""  # its number in the worst one's colour
            yield (
                f'<div class="ln{marked}" id="f{n}-L{number}"><a class="no" href="#f{n}-L{number}" tabindex="-1">'
                f'{number}</a><span class="tx">'
            )
            if number in ranges or number in inserts:
                yield from _marked_parts(text, ranges.get(number, ()), inserts.get(number, ()), self._inserted)
            else:
                yield esc(text)
            yield "</span></div>"
        yield "</div>"

    def _inserted(self, insert: _Insert) -> str:
        """What an insert puts in the text: a citation's status and card, or a finding's badge."""
        if insert.order == _CITATION:
            return self._inline_citation(insert.k, self.report.citations[insert.k])
        return self._badge(insert.k, self.report.findings[insert.k])

    def _badge(self, k: int, finding: Finding) -> str:
        sev = finding.severity.value
        lines = [f"<p><strong>{esc_line(finding.rule)}</strong>: {esc(finding.message)}</p>"]
        if finding.why:
            lines.append(f"<p>Why: {esc(finding.why)}</p>")
        if finding.suggestion:
            lines.append(f"<p>Fix: {esc(finding.suggestion)}</p>")
        if finding.source:
            lines.append(f"<p>Source: {esc(finding.source)}</p>")
        if finding.linked:  # plain text: the card on the text holds no link (see `_card`)
            rows = ", ".join(f"line {line}" for line in finding.linked)
            lines.append(f"<p>Cited by the evidence table: {rows}</p>")
        return (
            f'<details class="pop fbadge" id="f{self.number}-x{k}" data-sev="{sev}" '
            f'data-rule="{esc_line(finding.rule)}"><summary class="badge sev-{sev}" '
            f'title="{esc_line(finding.rule)}"><span aria-hidden="true">{SEVERITY_ICON.get(sev, "")}</span> {sev}'
            f'<span class="sr">: {esc_line(finding.rule)}</span></summary>'
            f'<div class="card">{"".join(lines)}</div></details>'
        )

    def _inline_citation(self, k: int, c: CitationResult) -> str:
        return (
            f'<details class="pop cite" id="f{self.number}-ci{k}"><summary>{_status_badge(c.status)}'
            f'<span class="sr"> citation {esc_line(c.id)}</span></summary>{self._card(c)}</details>'
        )

    # -- what is known about a citation

    def _cited_on(self, c: CitationResult, lead: str = "") -> str:
        """Links to the lines that cite it; "" when only its first mention does (the list links to that)."""
        lines = sorted({c.span.line, *(u.span.line for u in c.uses)})
        if lead and len(lines) < 2:
            return ""
        return lead + ", ".join([f'<a href="#{self.line_anchor(line)}">line {line}</a>' for line in lines])

    def _card(self, c: CitationResult, links: bool = False) -> str:
        """What is known about a citation. The card on the text holds no link, so Tab moves from one citation to
        the next; the file's list of citations carries its links."""
        rows: list[tuple[str, str]] = [
            ("Citation", f"<code>{esc_line(c.id)}</code>" + (_outlink(c) if links else "")),
            ("Status", _status_badge(c.status)),
        ]
        if c.note:
            rows.append(("Note", esc(c.note)))
        if c.ref_text:
            rows.append(("Cited as", esc(c.ref_text)))
        record = c.record
        if record is not None:
            rows += (_record_rows(record) if record.exists else []) + _retraction_rows(record)
        rows += _check_rows(c)
        rows.append(("Cited on", self._cited_on_cell(c, links)))
        return '<div class="card"><dl>' + "".join([f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows]) + "</dl></div>"

    def _cited_on_cell(self, c: CitationResult, links: bool) -> str:
        """The lines that cite it, as links only in the list's card (see `_card`), and how often it is mentioned."""
        if links:
            lines = self._cited_on(c)
        else:
            lines = ", ".join([f"line {line}" for line in sorted({c.span.line, *(u.span.line for u in c.uses)})])
        return lines + (f" ({counted(c.mentions, 'mention')})" if c.mentions > 1 else "")


def _check_rows(c: CitationResult) -> list[tuple[str, str]]:
    """What each check said of the citation, in the order the checks run; a check with nothing to say has no row."""
    rows = [*_metadata_rows(c.metadata), *_topic_rows(c.topic)]
    credible = c.credibility
    if credible is not None:
        rows.append(
            ("Credibility", f"{credible.score}/100" + (f" ({esc(credible.source)})" if credible.source else ""))
        )
    if c.evidence_level:
        rows.append(("Evidence level", esc_line(c.evidence_level)))
    if c.grounding:
        rows.append(("Figures checked", _grounding(c)))
    if c.judge is not None:
        rows.append(("Judge", esc_line(c.judge.verdict) + (f": {esc(c.judge.reason)}" if c.judge.reason else "")))
    return rows


def _metadata_rows(meta: MetadataResult | None) -> list[tuple[str, str]]:
    """Whether the reference text describes the record: the fields that differ, or that it matches."""
    if meta is None:
        return []
    if meta.mismatches:
        differs = ", ".join(esc_line(m) for m in meta.mismatches)
        return [("Differs from record", differs + " (the reference text does not match the record)")]
    return [("Reference text", "matches the record")] if meta.match else []


def _topic_rows(topic: TopicResult | None) -> list[tuple[str, str]]:
    """The topic verdict with its score and the terms it matched and missed; none when it was not checked."""
    if topic is None or topic.verdict == "unchecked":
        return []
    score = "" if topic.score is None else f" ({topic.score:.2f})"
    matched = f"; matched: {esc(', '.join(topic.matched))}" if topic.matched else ""
    missing = f"; missing: {esc(', '.join(topic.missing))}" if topic.missing else ""
    return [("On topic", f"{esc_line(topic.verdict)}{score}{matched}{missing}")]


def _file_meta(report: FileReport) -> str:
    share = report.coverage
    parts = [
        counted(len(report.findings), "finding"),
        counted(len(distinct_works(report.citations)), "citation"),
        counted(report.claims, "claim"),
        "no claims" if share is None else _file_coverage(report, share),
    ]
    if report.suppressed:
        parts.append(f"{thousands(len(report.suppressed))} suppressed")
    if report.not_claims:
        parts.append(structure.note(report.not_claims))
    if report.line:
        parts.append(f"corpus line {report.line}")
    return " · ".join(parts)


def _file_coverage(report: FileReport, share: float) -> str:
    """A report's coverage; with the claims its evidence table cites counted apart, when it cites any."""
    return coverage_text(share, report.grounded_claims, report.claims, report.linked_coverage, report.linked_claims)


def _record_rows(record: Record) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    if record.title:
        rows.append(("Title", esc(record.title)))
    if record.authors:
        more = " et al." if len(record.authors) > 3 else ""
        rows.append(("Authors", esc(", ".join(record.authors[:3])) + more))
    if record.journal or record.journal_iso:
        rows.append(("Journal", esc(record.journal or record.journal_iso)))
    if record.year:
        rows.append(("Year", esc(record.year)))
    if record.volume or record.pages:
        volume = f"{record.volume}({record.issue})" if record.volume and record.issue else record.volume
        rows.append(("Volume, pages", esc(", ".join(x for x in (volume, record.pages) if x))))  # "367(2), 107-14"
    if record.doi:
        rows.append(("DOI", esc(record.doi)))
    if record.trial_status:
        rows.append(
            ("Trial status", esc(record.trial_status) + (f": {esc(record.why_stopped)}" if record.why_stopped else ""))
        )
    rows.append(("Database", esc_line(record.database)))
    return rows


def _retraction_rows(record: Record) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    if record.retracted_by:
        rows.append(("Retraction notice", ", ".join(f"<code>{esc_line(x)}</code>" for x in record.retracted_by)))
    if record.concern:
        rows.append(("Expression of concern", ", ".join(f"<code>{esc_line(x)}</code>" for x in record.concern)))
    if record.retraction_of:
        rows.append(("Is a retraction of", ", ".join(f"<code>{esc_line(x)}</code>" for x in record.retraction_of)))
    if record.corrections:
        rows.append(("Corrections", ", ".join(f"<code>{esc_line(x)}</code>" for x in record.corrections)))
    return rows


def _grounding(c: CitationResult) -> str:
    items = []
    for use in c.grounding:
        parts = []
        for figure in use.figures:
            if figure.found is None:
                mark = "– not reported in the abstract"
            elif figure.found:
                mark = "✓ in the abstract"
            else:
                near = f" (it reports {esc(', '.join(figure.nearest))})" if figure.nearest else ""
                mark = f"✗ not in the abstract{near}"
            parts.append(f"“{esc(figure.text)}” {mark}")
        if use.effect is not None:
            said = f": “{esc(use.effect.reported)}”" if use.effect.reported else ""
            parts.append(f"effect {esc_line(use.effect.claimed)}: {esc_line(use.effect.verdict)}{said}")
        if use.note:
            parts.append(esc(use.note))
        items.append(f"<li>line {use.line}: {'; '.join(parts) or 'nothing to check'}</li>")
    return f"<ul>{''.join(items)}</ul>"


_LINK_TARGET = re.compile(r"https?://[^\s\x00-\x1f\x7f-\x9f\"'<>`\\]+\Z", re.IGNORECASE)
_LINKS = {
    CitationKind.PMID: "https://pubmed.ncbi.nlm.nih.gov/{}/",
    CitationKind.PMCID: "https://pmc.ncbi.nlm.nih.gov/articles/{}/",
    CitationKind.NCT: "https://clinicaltrials.gov/study/{}",
    CitationKind.DOI: "https://doi.org/{}",
}
_ID_CHARS = re.compile(r"[A-Za-z0-9./_;()\-:]+\Z")  # what an id may hold to be put in a link unquoted


def link_target(url: str) -> str | None:
    """The URL when it is a plain http(s) one, else None: `javascript:`, `data:` and the like never become links."""
    return url if _LINK_TARGET.match(url) else None


def _outlink(c: CitationResult) -> str:
    """A link to the cited work: the database's page for an id, the URL itself only when it is http(s)."""
    pattern = _LINKS.get(c.kind)
    if pattern is not None and _ID_CHARS.match(c.value):
        url: str | None = pattern.format(c.value)
    elif c.kind is CitationKind.URL:
        url = link_target(c.value)
    else:
        url = None
    if url is None:
        return ""
    return f' <a href="{html.escape(url, quote=True)}" rel="noopener noreferrer nofollow">open</a>'


# ---------------------------------------------------------------- marking a line


def _covered(span, lines: list[str]) -> Iterable[tuple[int, int, int]]:
    """(line, start, end) for each line a span covers, as 0-based offsets into that line; empty parts left out."""
    last = min(max(span.end_line, span.line), len(lines))
    for line in range(span.line, last + 1):
        text = lines[line - 1]
        start = span.column - 1 if line == span.line else 0
        end = span.end_column - 1 if line == span.end_line else len(text)
        start, end = max(0, min(start, len(text))), max(0, min(end, len(text)))
        if end > start:
            yield line, start, end


def _marked_parts(
    text: str, ranges: Iterable[_Range], inserts: Iterable[_Insert], made: Callable[[_Insert], str]
) -> Iterator[str]:
    """A line with its ranges wrapped (nested, each cut at every boundary) and its inserts put in place, each
    insert's HTML `made` as it is written.

    Where marks nest, the most severe is innermost: its colour is the one the text shows. The marks
    open at each cut are kept as the cuts go by (a line of 20,000 cited ids has 40,000 marks, and
    asking each of them at every cut took minutes), opened and closed from two lists of the
    ranges, one by start and one by end, swept with the cuts.
    """
    length = len(text)
    ranges = sorted(ranges, key=lambda r: r.weight)  # stable: equals keep the findings' order
    inserts = _in_order(inserts, length)
    cuts = sorted(
        {0, length, *(r[0] for r in ranges), *(r[1] for r in ranges), *(min(i.column, length) for i in inserts)}
    )
    covering = [n for n, r in enumerate(ranges) if r.end > r.start]  # an empty range covers no text
    starts = sorted(covering, key=lambda n: ranges[n].start)
    ends = sorted(covering, key=lambda n: ranges[n].end)
    del covering
    open_now: set[int] = set()  # the ranges covering the text from this cut to the next, by their place in `ranges`
    at_insert = at_start = at_end = 0
    for a, b in zip(cuts, [*cuts[1:], None], strict=True):
        while at_insert < len(inserts) and min(inserts[at_insert].column, length) <= a:
            yield made(inserts[at_insert])
            at_insert += 1
        while at_end < len(ends) and ranges[ends[at_end]].end <= a:  # every end is a cut: these end at `a`
            open_now.discard(ends[at_end])
            at_end += 1
        while at_start < len(starts) and ranges[starts[at_start]].start <= a:
            open_now.add(starts[at_start])
            at_start += 1
        if b is None or b <= a:
            continue
        active = [ranges[n] for n in sorted(open_now)]
        yield "".join([*(r.open for r in active), esc(text[a:b]), *(r.close for r in reversed(active))])
    yield from (made(i) for i in inserts[at_insert:])


def _source(report: FileReport) -> tuple[list[str] | None, str]:
    """The report's lines as the audit read them, or None and why they are not shown.

    The text the read stage held (`FileReport.text`), never the path read again: a FIFO or a
    `<(cat r.md)` has nothing left to give, a file rewritten since would show text that was never
    audited, and a path is not the page's to follow anywhere.
    """
    if report.line or report.record is not None:
        return None, "A corpus record: its text is not shown here, only what was found in it."
    if report.error:
        return None, ""
    if report.text is None:
        if report.path == "-":
            return None, "Read from stdin: its text is not shown here, only what was found in it."
        return None, f"Larger than {MAX_SOURCE_BYTES >> 20} MB, or read as a stream: its text is not shown here."
    if len(report.text) > MAX_SOURCE_BYTES:
        return None, f"Larger than {MAX_SOURCE_BYTES >> 20} MB: its text is not shown here."
    lines = report.text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the last line's end starts no line
    return lines, ""

"""A high claim counts as cited only by a citation that can be checked: a marker is not evidence by being there.

The read stage marks a claim cited when its sentence holds any citation (clinaudit/read/document.py).
For a dose, contraindication or approval claim, that is not enough here: a citation that no check
can ever settle is no source, and the claim keeps its severity, with a finding that says why.
Such a citation is

- a `[src:…]` marker with no knowledge base to find it in (`--sources`);
- a reference entry (`[1]` → `1. x`) that matches no record and names no work: no title, no author;
- a web page never fetched (no `--check-urls`) on a host clinaudit does not know (data/domains.yaml):
  `(http://a.b)` costs a model nothing. A page on a known host (a health agency, a journal, PubMed)
  counts as today, unfetched; with `--check-urls` any page that answers counts, and one that
  cannot be reached is unverifiable, as an id is.

A well-formed id the lookup could not settle (offline, faults: `unverifiable`) still counts as
cited, since a missing check is no evidence against it; a high claim that rests only on such
ids is an `unverifiable-support` finding (info), which the summary counts and
`--fail-on-unverifiable` fails on.

Only a claim cited in its own sentence (or by the evidence table, whose uses it then is) is weighed
here: what a lead-in, a caption, a closing group or a table row cites is decided as the read
stage decided it.
"""

from __future__ import annotations

from typing import ClassVar
from urllib.parse import urlsplit

from clinaudit.check import score
from clinaudit.check.context import ReportContext, describe
from clinaudit.core import catalogue as rules
from clinaudit.core.models import CitationKind, CitationResult, Claim, Finding, Severity, Status
from clinaudit.read import entries

SHOWN = 3  # citations a finding names
# the scopes whose citations are the claim's own uses: its sentence's, and the evidence table's rows' (which link
# only to what can be checked, clinaudit/check/linked.py, and so may rest on ids left unverifiable)
_OWN = frozenset({"sentence", "evidence-table"})


def unchecked_why(result: CitationResult) -> str:
    """Why a citation can never be checked, or "" when it can be (or was)."""
    if result.kind is CitationKind.SOURCE and result.status is Status.UNVERIFIABLE:
        return "a knowledge-base marker with no knowledge base to find it in (--sources)"
    if result.kind is CitationKind.REFERENCE and result.status is Status.UNRESOLVED and _names_nothing(result):
        return "a reference entry that names no work (no title, no author) and matches no record"
    if (
        result.kind is CitationKind.URL
        and result.status is Status.UNCHECKED
        and score.domain_category(result.value) == "unknown_web"
    ):
        return "a web page on an unknown host, never fetched (--check-urls fetches it)"
    return ""


class Support:
    name: ClassVar[str] = "support"

    def document(self, report: ReportContext, cited: tuple[CitationResult, ...]) -> tuple[Finding, ...]:
        claims = [c for c in report.document.claims if c.cited and c.scope in _OWN and _high(c)]
        if not claims:
            return ()
        results = {r.id: r for r in cited}
        # by sentence and line: a sentence repeated down a long report is many sentences, each looked up once
        by_sentence: dict[tuple[str, int], list[str]] = {}
        for mention in report.document.mentions:
            if mention.sentence and mention.claim_type is not None:
                by_sentence.setdefault((mention.sentence, mention.span.line), []).append(mention.id)
        from clinaudit.read import claims as claim_rules

        fixes = claim_rules.suggestions()
        out: list[Finding] = []
        for claim in claims:
            span = claim.sentence.span
            ids = dict.fromkeys(
                cid
                for line in range(span.line, span.end_line + 1)
                for cid in by_sentence.get((claim.sentence.text, line), ())
            )
            own = [results[cid] for cid in ids if cid in results]
            if not own:
                continue
            whys = [unchecked_why(r) for r in own]
            if all(whys):
                named = "; ".join(f"{_named(r)}: {why}" for r, why in list(zip(own, whys, strict=True))[:SHOWN])
                out.append(
                    rules.finding(
                        rules.UNCITED_CLAIM,
                        span,
                        f"uncited {claim.claim_type.replace('_', ' ')}: cited only by what cannot be checked ({named})",
                        severity=claim.severity,
                        sentence=claim.sentence.text,
                        claim_type=claim.claim_type,
                        suggestion=fixes[claim.claim_type],
                        why=claim.why,
                        section=claim.section,
                    )
                )
            elif all(why or r.status is Status.UNVERIFIABLE for r, why in zip(own, whys, strict=True)):
                unverified = [r for r, why in zip(own, whys, strict=True) if not why]
                out.append(
                    rules.finding(
                        rules.UNVERIFIABLE_SUPPORT,
                        span,
                        f"{claim.claim_type.replace('_', ' ')} rests only on "
                        + ", ".join(describe(r) for r in unverified[:SHOWN])
                        + (", …" if len(unverified) > SHOWN else "")
                        + ", which could not be checked",
                        sentence=claim.sentence.text,
                        claim_type=claim.claim_type,
                        citation=unverified[0].id,
                        section=claim.section,
                    )
                )
        return tuple(out)


def _names_nothing(result: CitationResult) -> bool:
    """An entry with neither a title nor an author (`1. x`): nothing a reader could look for.

    An entry that names a work no PubMed record matches (a guideline, a book) still cites: its
    `unresolved-reference` finding says so, and a reader can find it.
    """
    fields = entries.parse(result.ref_text)
    return not (fields.title or fields.author or fields.authors)


def _named(result: CitationResult) -> str:
    """A citation as this finding names it: a web page by its host (the table shows the address beside it)."""
    if result.kind is CitationKind.URL:
        return f"a link to {urlsplit(result.value).hostname or '?'}"
    return describe(result)


def _high(claim: Claim) -> bool:
    return claim.severity is Severity.HIGH

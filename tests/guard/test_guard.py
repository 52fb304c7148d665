"""StreamGuard: hold-back release, resets, and the invariants that must hold for any chunking."""

from __future__ import annotations

import re
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clinaudit.core.models import Options
from clinaudit.guard import holdback
from clinaudit.guard.stream import Event, StreamGuard
from clinaudit.read import citations, claims

from helpers import SAMPLES
from helpers.texts import WRITTEN

# Real report text: the samples, and answers written the way models write them.
TEXTS = {p.name: p.read_text(encoding="utf-8") for p in sorted(SAMPLES.glob("*.md"))} | WRITTEN
QUICK = Options(offline=True)


class Trace:
    """Feeds a guard and records every state of the text the reader has."""

    def __init__(self, **kwargs) -> None:
        self.events: list[Event] = []
        self.shown = ""
        self.states: list[str] = []
        self.guard = StreamGuard(self._on, options=QUICK, verify_timeout=60, **kwargs)

    def _on(self, event: Event) -> None:
        self.events.append(event)
        if event.kind == "text":
            assert event.data["offset"] == len(self.shown)
            self.shown += event.data["delta"]
        elif event.kind == "reset":
            assert event.data["from_offset"] <= len(self.shown)
            self.shown = self.shown[: event.data["from_offset"]]
        self.states.append(self.shown)

    def feed_all(self, text: str, sizes: list[int]) -> Trace:
        pos, k = 0, 0
        while pos < len(text):
            size = sizes[k % len(sizes)] if sizes else 1
            self.guard.feed(text[pos : pos + size])
            pos, k = pos + size, k + 1
        self.guard.close()
        return self

    def resets(self) -> list[dict]:
        return [e.data for e in self.events if e.kind == "reset"]


def chunked(text: str, sizes: list[int]) -> Trace:
    return Trace().feed_all(text, sizes)


def marker_spans(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for p in citations.MARKER_PATTERNS.values() for m in p.finditer(text)]


def assert_never_cuts_a_marker(trace: Trace, text: str) -> None:
    spans = marker_spans(text)
    for state in trace.states:
        assert text.startswith(state), "what the reader has is always a prefix of the stream"
        cut = [text[a:b] for a, b in spans if a < len(state) < b]
        assert not cut, f"released text ends inside the marker {cut[0]!r}: ...{state[-30:]!r}"


sizes_strategy = st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=30)
text_names = st.sampled_from(sorted(TEXTS))
PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_char_by_char_releases_add_up_to_the_final_text(name):
    text = TEXTS[name]
    trace = chunked(text, [1])
    assert trace.shown == trace.guard.released
    assert_never_cuts_a_marker(trace, text)
    if trace.guard.stopped is None:
        assert trace.shown + trace.guard.dropped == text


@cache
def char_by_char(text: str) -> tuple[str, list[dict], list[int]]:
    """The text shown, the resets, and the released length after every prefix, one character at a time."""
    trace, lengths = Trace(), [0]
    for ch in text:
        trace.guard.feed(ch)
        lengths.append(len(trace.guard.released))
    trace.guard.close()
    return trace.shown, trace.resets(), lengths


@PROPERTY
@given(name=text_names, sizes=sizes_strategy)
def test_random_chunks_release_the_same_text_at_the_same_points(name, sizes):
    text = TEXTS[name]
    shown, resets, lengths = char_by_char(text)
    trace, pos, k = Trace(), 0, 0
    while pos < len(text):
        piece = text[pos : pos + sizes[k % len(sizes)]]
        trace.guard.feed(piece)
        pos, k = pos + len(piece), k + 1
        # what is out after a prefix depends on the prefix only, not on how it was cut up
        assert len(trace.guard.released) == lengths[pos]
    trace.guard.close()
    assert trace.shown == shown == trace.guard.released
    assert trace.resets() == resets
    assert_never_cuts_a_marker(trace, text)


marker_heavy = st.text(alphabet=list("[]0123456789,- .:/PMIDNCTdoi10htps"), max_size=120)


@PROPERTY
@given(prefix=st.sampled_from(sorted(WRITTEN)), noise=marker_heavy, sizes=sizes_strategy)
def test_marker_like_noise_is_never_released_half_way(prefix, noise, sizes):
    text = WRITTEN[prefix][:200] + noise
    trace = chunked(text, sizes)
    assert_never_cuts_a_marker(trace, text)
    assert char_by_char(text)[0] == trace.shown
    if trace.guard.stopped is None:
        assert trace.shown + trace.guard.dropped == text


@pytest.mark.parametrize(
    "fragment",
    ["[", "[12", "PMID: 123", "10.1056/NEJ", "NCT0123", "https://pubmed.ncbi", "[src:gin", "[1, 2"],
)
def test_a_partial_marker_never_reaches_the_reader(fragment):
    guard = StreamGuard(options=QUICK)
    shown = guard.feed("Survival improved in the treated group " + fragment)
    assert shown == "Survival improved in the treated group "
    assert guard.hold_reason in holdback.marker_bounds()


@pytest.mark.parametrize(
    ("tail", "shown", "dropped"),
    [
        ("see [12", "see ", "[12"),
        ("see PMID: ", "see ", "PMID: "),
        ("see 10.1056/", "see ", "10.1056/"),
        ("see https://", "see ", "https://"),
        ("PMID: 123", "PMID: 123", ""),  # complete at the end: a real marker
        ("x [", "x [", ""),  # too short to be a marker: released as text
        ("a ratio of 10.", "a ratio of 10.", ""),
        ("value 1", "value 1", ""),
    ],
)
def test_end_of_stream_drops_only_an_unmistakable_broken_marker(tail, shown, dropped):
    guard = StreamGuard(options=QUICK)
    released = guard.feed(tail)
    released += guard.close()
    assert released == shown
    assert guard.dropped == dropped


def test_a_bracket_that_is_not_a_marker_is_released_once_it_cannot_become_one():
    guard = StreamGuard(options=QUICK)
    assert guard.feed("Doses vary [") == "Doses vary "
    assert guard.feed("s") == ""  # "[s" could still become "[src:…]"
    assert guard.feed("ee") == "[see"  # "[se" cannot
    assert guard.feed(" below]") == " below]"


def test_released_text_lags_by_no_more_than_the_grammar_bound():
    text = TEXTS["markers"]
    bounds = holdback.marker_bounds()
    guard = StreamGuard(options=QUICK)
    for k, ch in enumerate(text, 1):
        guard.feed(ch)
        lag = k - len(guard.released)
        if guard.hold_reason in bounds:
            assert lag <= bounds[guard.hold_reason]
        elif guard.hold_reason == "":
            assert lag == 0


DOSE = "Hypertension is common after the age of 60. Patients do well on 20 mg nightly."


def test_a_dose_claim_unsafe_only_at_its_last_word_triggers_exactly_one_reset():
    trace = Trace()
    before_last_word = DOSE[: DOSE.index("nightly")]
    for ch in before_last_word:
        trace.guard.feed(ch)
    assert trace.resets() == []
    assert "Patients do well on" in trace.shown  # streamed while it was harmless
    for ch in DOSE[len(before_last_word) :] + " Next, check the kidneys.":
        trace.guard.feed(ch)
    assert trace.guard.feed("More text.") == ""  # stopped: nothing more is released
    trace.guard.close()
    resets = trace.resets()
    assert len(resets) == 1
    assert resets[0]["from_offset"] == DOSE.index("Patients")
    assert resets[0]["reason"] == "uncited dose recommendation"
    assert trace.shown == "Hypertension is common after the age of 60. "
    assert not any("20 mg" in state for state in trace.states), "the claim pattern itself was never shown"


@pytest.mark.parametrize("sizes", [[1], [3], [7, 2], [len(DOSE)]])
def test_the_reset_is_the_same_for_every_chunking(sizes):
    assert len(chunked(DOSE, sizes).resets()) == 1


@pytest.mark.parametrize(
    "text",
    [
        DOSE[:-1] + " [1].\n\n[1] Label. PMID: 12345678\n",
        DOSE[:-1] + " (PMID: 12345678). More.",
        "Is 20 mg nightly right for you? Ask your doctor.",
        "```\nThe recommended dose is 5 mg/kg twice daily.\n```\n",
    ],
)
def test_a_cited_or_non_claim_dose_sentence_does_not_stop_the_stream(text):
    trace = chunked(text, [1])
    assert trace.resets() == []
    assert trace.shown == text


def test_only_the_configured_claim_types_stop_the_stream():
    assert chunked(DOSE, [1]).guard.stopped is not None
    assert Trace(stop_on=[]).feed_all(DOSE, [1]).guard.stopped is None
    assert Trace(stop_on=["contraindication"]).feed_all(DOSE, [1]).guard.stopped is None
    with pytest.raises(ValueError, match="unknown claim type"):
        StreamGuard(stop_on=["dosing"])


def test_caller_reset_abandons_the_half_written_sentence_and_the_stream_goes_on():
    trace = Trace()
    for ch in "Asthma is common. Budesonide-formoterol as needed reduces severe":
        trace.guard.feed(ch)
    offset = trace.guard.reset("tool call")
    assert offset == len("Asthma is common. ")
    assert trace.resets() == [{"from_offset": offset, "reason": "tool call"}]
    assert trace.shown == "Asthma is common. "
    for ch in "The search found two trials [1].":
        trace.guard.feed(ch)
    trace.guard.close()
    assert trace.shown == "Asthma is common. The search found two trials [1]."


def test_sources_events_list_the_citations_released_so_far():
    trace = chunked(TEXTS["markers"], [5])
    listings = [e.data["citations"] for e in trace.events if e.kind == "sources"]
    assert listings, "a sources event follows the first released citation"
    ids = [c["id"] for c in listings[-1]]
    assert {"ref:1", "ref:2", "pmid:29768149", "nct:NCT01234567", "doi:10.1056/nejmoa1715274"} <= set(ids)
    assert "source:src:gina-2024" in ids
    first = listings[0]
    assert first[0]["id"] == "ref:1" and first[0]["status"] == "unchecked"


def test_end_reports_the_final_text_citations_findings_and_verdict():
    events: list[Event] = []
    guard = StreamGuard(events.append, options=QUICK, verify_timeout=60)
    for ch in TEXTS["clean_cited.md"]:
        guard.feed(ch)
    result = guard.end()
    assert [e.kind for e in events][-2:] == ["status", "end"]
    assert events[-2].data["state"] == "checking_citations"
    end = events[-1].data
    assert end["text"] == result.text == TEXTS["clean_cited.md"]
    assert end["verdict"] == result.verdict == "pass"
    assert end["stopped"] is None and end["dropped"] is None
    # offline with an empty cache nothing can be checked: every citation is kept, marked unverifiable
    flagged = {c["id"]: c["status"] for c in end["flagged"]}
    assert flagged == {
        "pmid:29768149": "unverifiable",
        "doi:10.1056/nejmoa1715274": "unverifiable",
        "pmid:22663011": "unverifiable",
        "pmid:35830032": "unverifiable",
    }
    assert end["citations"] == []
    assert {f["citation"] for f in end["findings"] if f["rule"] == "unverifiable-citation"} == set(flagged)


def test_a_stopped_stream_ends_failed_with_the_withdrawn_claim_as_a_finding():
    events: list[Event] = []
    guard = StreamGuard(events.append, options=QUICK, verify_timeout=60)
    for ch in TEXTS["llm_answer.md"]:
        guard.feed(ch)
    result = guard.end()
    assert result.stopped is not None and result.verdict == "fail"
    end = events[-1].data
    assert end["text"] == result.text == guard.released
    assert end["stopped"] == {"reason": "uncited approval claim", "from_offset": len(result.text)}
    assert "FDA-approved" in result.withdrawn and "FDA-approved" not in result.text
    withdrawn = [f for f in end["findings"] if f["rule"] == "uncited-claim" and "withdrawn" in f["message"]]
    assert len(withdrawn) == 1 and withdrawn[0]["severity"] == "high"


WORDS = [
    "Patients",
    "take",
    "20",
    "mg",
    "nightly",
    "twice",
    "daily",
    "should",
    "not",
    "be",
    "taken",
    "is",
    "indicated",
    "for",
    "asthma",
    "the",
    "trial",
    "[1]",
    "[2,",
    "3]",
    "[",
    "PMID:",
    "29768149",
    "NCT01234567",
    "10.1056/NEJMoa1",
    "https://doi.org/10.1/x",
    "(PMID",
    "12)",
    ".",
    ".",
    "?",
    ",",
    "\n",
    "\n\n",
    "- ",
    "| ",
    "e.g.",
    "Dr.",
    "[src:a]",
    "Take 20 mg nightly",
    "It is contraindicated in pregnancy",
    "is FDA-approved",
    "b.i.d.",
]
prose = st.lists(st.sampled_from(WORDS), max_size=60).map(" ".join)


@PROPERTY
@given(text=prose, sizes=sizes_strategy)
def test_any_mix_of_claims_and_markers_keeps_the_invariants(text, sizes):
    shown, resets, _ = char_by_char(text)
    many = chunked(text, sizes)
    assert many.shown == shown == many.guard.released
    assert many.resets() == resets
    assert len(resets) <= 1
    assert_never_cuts_a_marker(many, text)
    stop = many.guard.stopped
    if stop is None:
        assert many.shown + many.guard.dropped == text
    else:  # no state ever showed any part of the claim pattern that stopped the stream
        pattern = claims.rules().by_name(stop.finding.claim_type).pattern
        found = re.compile(pattern.pattern, re.IGNORECASE).search(text, len(shown))
        assert found is not None
        assert max(len(state) for state in many.states) <= found.start()


def test_a_label_alone_does_not_make_the_next_sentence_prose_before_the_pipeline_agrees():
    """'(PMID P' says nothing yet: the dose sentence before it waits, and stops once 'Patients' shows it is prose.

    Fed a character at a time the guard judged the dose claim at '(PMID P', read it as
    cited by the NCT id that followed (the pipeline takes a label for no prose) and let
    it through; fed five at a time it stopped. Both now stop, as `check` flags it.
    """
    text = "Patients Patients Take 20 mg nightly b.i.d. NCT01234567 (PMID Patients"
    shown, _, _ = char_by_char(text)
    many = chunked(text, [5])
    assert shown == many.shown == ""
    assert many.guard.stopped is not None and many.guard.stopped.finding.claim_type == "dose_recommendation"

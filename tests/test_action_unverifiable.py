"""The Action fails a report whose high claims rest only on ids that could not be checked: --fail-on-unverifiable.

Run as tests/test_action.py runs the Action's `run:` steps, with bash, offline (nothing cached,
so every id is unverifiable).
"""

from __future__ import annotations

from test_action import ACTION, Runner, _path_with_this_clinaudit, _workspace

RESTING = "# Warfarin\n\nWarfarin is contraindicated in pregnancy (PMID 12345678).\n"


def test_the_action_turns_fail_on_unverifiable_on_by_default(tmp_path):
    assert ACTION["inputs"]["fail-on-unverifiable"]["default"] == "true"
    workspace = _workspace(tmp_path, {"docs/plan.md": RESTING})
    runner = Runner(workspace, tmp_path, {"paths": "docs", "offline": "true"}, {}, _path_with_this_clinaudit())
    runner.run()
    assert runner.outputs["audit"]["verdict"] == "fail" and runner.codes["Gate"] == 1
    assert "unverifiable-support" in runner.summary.read_text("utf-8")


def test_the_action_input_turns_it_off(tmp_path):
    workspace = _workspace(tmp_path, {"docs/plan.md": RESTING})
    inputs = {"paths": "docs", "offline": "true", "fail-on-unverifiable": "false"}
    runner = Runner(workspace, tmp_path, inputs, {}, _path_with_this_clinaudit())
    runner.run()
    assert runner.outputs["audit"]["verdict"] == "pass" and runner.codes["Gate"] == 0

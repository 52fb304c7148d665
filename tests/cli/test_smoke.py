import json

from conftest import SAMPLES, run_cli


def test_cli_runs_on_samples_and_fails_the_unsafe_ones():
    proc = run_cli("check", str(SAMPLES), "--format", "json")
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    verdicts = {f["path"].rsplit("/", 1)[-1]: f["verdict"] for f in data["files"]}
    assert verdicts == {"clean_cited.md": "pass", "llm_answer.md": "fail", "uncited_dosing.md": "fail"}

"""Verdict, suppressions, baselines, the rule catalogue and output formats."""

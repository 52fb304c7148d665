"""Resolve cited ids: one service per database, one shared HTTP client and cache."""

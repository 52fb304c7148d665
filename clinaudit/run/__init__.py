"""Orchestration: the order of the stages (pipeline), settings resolved once (settings, config), and the ways
a run is spread (parallel, the Dask corpus API). Only the stages below and the edges above meet here."""

"""The lookup stage: every cited id resolved once, in shared batches, through one policy and one deadline.

`lookup(documents, settings, run)` (resolve.py) is the stage's one call. Each source of
answers is a service behind one interface (services/): the databases, the knowledge base,
the reference search and the link check; policy.py decides, for all of them alike, what
the mirror and the cache answer and what is asked; http.py is the one polite client.
"""

from clinaudit.lookup.resolve import Hooks, LookupRun, Lookups, Meter, MeterUnit, lookup, no_meter

__all__ = ["Hooks", "LookupRun", "Lookups", "Meter", "MeterUnit", "lookup", "no_meter"]

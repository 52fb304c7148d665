"""Errors that end a run with exit code 2 and one line on stderr."""


class InputError(Exception):
    """Bad input (a file, an option, a config): the user can fix it; no traceback."""


class OutputError(Exception):
    """The output cannot be written (a full disk, an I/O error): the verdict never reached its reader."""

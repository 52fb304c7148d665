"""Errors that end a run with exit code 2 and one line on stderr."""


class InputError(Exception):
    """Bad input (a file, an option, a config): the user can fix it; no traceback."""


class OutputError(Exception):
    """The output cannot be written (a full disk, an I/O error): the verdict never reached its reader."""


class Interrupted(BaseException):
    """A signal asked the run to stop (SIGINT, SIGTERM); raised in the main thread where it is handled.

    A BaseException, as KeyboardInterrupt is, so no `except Exception` takes it for a fault.
    """

    def __init__(self, signum: int, name: str) -> None:
        super().__init__(name)
        self.signum = signum
        self.name = name

    @property
    def code(self) -> int:
        return 128 + self.signum

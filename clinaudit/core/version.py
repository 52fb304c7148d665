"""clinaudit's version: on the ground floor, so any layer can name it without importing the library API."""

__version__ = "0.1.0"

"""The stream guard: audit model output as it is generated."""

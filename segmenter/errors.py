"""Errors users see, importable without torch."""


class ModelLoadError(ValueError):
    """A model folder or name that cannot be used, with what to do about it."""

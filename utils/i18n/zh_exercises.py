"""Chinese catalogue part: exercises (see utils/i18n/__init__.py)."""

MESSAGES: dict[str, str] = {}

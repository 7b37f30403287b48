"""Chinese catalogue part: quiz (see utils/i18n/__init__.py)."""

MESSAGES: dict[str, str] = {}

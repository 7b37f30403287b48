"""Chinese catalogue part: screen_a (see utils/i18n/__init__.py)."""

MESSAGES: dict[str, str] = {}

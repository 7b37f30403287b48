"""Chinese catalogue part: screen_b (see utils/i18n/__init__.py)."""

MESSAGES: dict[str, str] = {}

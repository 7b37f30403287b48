"""Chinese catalogue part: utils/grammar.py (the model's next-token probabilities beside the grammar's)."""

MESSAGES: dict[str, str] = {
    "token": "token",
    "model": "模型",
    "grammar": "语法",
}

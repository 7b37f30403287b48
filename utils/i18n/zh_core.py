"""Chinese catalogue part: the check helper, the recompute verdict and the panels' frame."""

MESSAGES: dict[str, str] = {
    # utils/show.py: check(label, condition, expect)
    "{label}: {value}{note}": "{label}：{value}{note}",
    " (a broken variant: expected False)": "（故意展示的错误版本：预期就是 False）",
    # utils/recompute.py: RecomputeReport.verdict
    "OK: cached == recompute within {tol} for {n} steps": "通过：{n} 步中缓存结果与完整重算一致（容差 {tol}）",
    "DIVERGED at step {step} (position {position}): max |diff| = {diff} > tol {tol}":
        "第 {step} 步（位置 {position}）出现偏差：max |diff| = {diff} > 容差 {tol}",
}

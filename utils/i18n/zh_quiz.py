"""Chinese catalogue part: the self-tests' frame (utils/quiz/question.py, utils/widgets/quiz.py).

The questions themselves (prompts, options, answers, explanations) are written whole, each beside its
English, in the bank (``utils/quiz/``); here are the labels around them.
"""

MESSAGES: dict[str, str] = {
    # utils/quiz/question.py: the kinds of question, the sheet, the key and check_answer
    "single choice": "单选题",
    "true / false": "判断题",
    "fill in": "填空题",
    "open question": "开放题",
    "(choose)": "（请选择）",
    "Q{number}. [notebook {notebook:02d} · {kind}] {prompt}": "第 {number} 题 [笔记本 {notebook:02d} · {kind}] {prompt}",
    "   Answer: {answer}": "   答案：{answer}",
    "   Why: {why}": "   解析：{why}",
    "Q{number}. Model answer: {answer}": "第 {number} 题 参考答案：{answer}",
    "Q{number}. {verdict}": "第 {number} 题 {verdict}",
    "✓ correct": "✓ 正确",
    "✗ not quite: the answer is {answer}": "✗ 不太对，正确答案是：{answer}",
    " (a retry: only the first answer scores)": "（这是重答：只有第一次作答计分）",
    # utils/widgets/quiz.py: the cards, the buttons, the feedback and the score (each card names its
    # notebook with tr(SERIES title): those titles are in zh_core, with the course map)
    "Self-test": "自测",
    "<b>Q{number}.</b> <i>({kind} · notebook {notebook:02d} {title})</i>":
        "<b>第 {number} 题</b> <i>（{kind} · 笔记本 {notebook:02d} {title}）</i>",
    "your answer": "你的答案",
    "your answer, in a sentence or two": "用一两句话写下你的答案",
    "check": "检查",
    "I had it": "我答出来了",
    "I missed it": "我没答出来",
    "<span style='color:#b00'>Answer first, then check.</span>": "<span style='color:#b00'>请先作答，再点“检查”。</span>",
    "<br><b>Why:</b> {why}": "<br><b>解析：</b>{why}",
    "<b>Model answer:</b> {answer}": "<b>参考答案：</b>{answer}",
    "<br>Did you have it?": "<br>你答出来了吗？",
    "<span style='color:#080'>&#10004; correct</span>": "<span style='color:#080'>&#10004; 正确</span>",
    "<span style='color:#b00'>&#10008; not quite</span> — the answer is <b>{answer}</b>":
        "<span style='color:#b00'>&#10008; 不太对</span>，正确答案是 <b>{answer}</b>",
    "<br>&#10004; marked as known": "<br>&#10004; 已标记为掌握",
    "<br>&#10008; marked to revisit": "<br>&#10008; 已标记为待复习",
    "<b>Score:</b> done {done} / {total} · right first time {correct}": "<b>得分：</b>已完成 {done} / {total} · 首次答对 {correct}",
    " · right on retry {n} (not scored)": " · 重答才对 {n}（不计分）",
    " <i>(a retry: only the first answer scores)</i>": " <i>（这是重答：只有第一次作答计分）</i>",
    "[quiz: {n} questions; run the notebook in Jupyter or Colab to answer them]":
        "[测验：共 {n} 题；在 Jupyter 或 Colab 中运行本笔记本即可作答]",
}

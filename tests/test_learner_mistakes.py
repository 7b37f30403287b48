"""The scripted learner mistakes (tools/learner_mistakes.py) all behave well: each gets a ValueError that
names the bad value, or the right answer; none gets a raw error, a silent wrong answer, a hang or a huge
allocation. The script runs in its own process: it caps its address space (a 30 GB preallocation must
fail there, fast) and times each case with an alarm, neither of which belongs in a test worker."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_scripted_learner_mistake_gets_a_clear_error_or_the_right_answer():
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "learner_mistakes.py"), "--strict"], cwd=ROOT,
                          capture_output=True, text=True, timeout=1800)
    misbehaved = [line for line in done.stdout.splitlines() if " NOT " in line or line.startswith("        ")]
    assert done.returncode == 0, "\n".join(misbehaved) or done.stderr[-3000:]
    assert "did not" in done.stdout and ", 0 did not" in done.stdout, done.stdout[-500:]

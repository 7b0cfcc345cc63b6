import sys
from pathlib import Path

# The benchmark's package sits at the project root, and the app's test harness beside us.
ROOT = Path(__file__).resolve().parents[2]
for folder in (ROOT, ROOT / "tests" / "app"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

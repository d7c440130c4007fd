"""Run every benchmark in bench/ (``bench_*.py``) and print their tables in turn.

``make bench`` runs this (``.venv/bin/python -m bench.run_all [name …]``). Each script is
its own process so their memory figures are their own; a failing script is reported and
the others still run.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    only = set(sys.argv[1:])
    failures = 0
    for script in sorted(HERE.glob("bench_*.py")):
        name = script.stem.removeprefix("bench_")
        if only and name not in only:
            continue
        print(f"\n## {name}\n", flush=True)
        started = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", f"bench.{script.stem}"], cwd=HERE.parent)
        print(
            f"\n_{script.name}: {time.perf_counter() - started:.0f} s, exit {proc.returncode}_",
            flush=True,
        )
        failures += proc.returncode != 0
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

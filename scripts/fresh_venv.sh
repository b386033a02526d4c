#!/usr/bin/env bash
# The Python package as a new user gets it (issue #18, must-show 2): a brand-new
# venv outside the repository (VENV, default /tmp/ns-freshvenv, made afresh),
# `pip install REPO` with standard build isolation (setuptools and numpy from
# the index), `import nextstate`, the README's tutorial block run as written
# from the repository root, then pytest on python/tests with pytest and the
# optional packages installed in that venv.  Prints the wall time of each step.
# Not part of `make test`: it needs the package index and a cold build (about
# a minute on 2 cores).  FRESH_COLD=1 (default) removes setuptools' build/temp.*
# and build/lib.* first, so the install compiles everything as a fresh clone does.
set -eu
REPO=$(cd "$(dirname "$0")/.." && pwd)
VENV=${VENV:-/tmp/ns-freshvenv}
PY=${PYBASE:-/usr/bin/python3}
t() { local s=$SECONDS; "$@"; echo "fresh_venv: $((SECONDS - s)) s: $*" >&2; }

[ "${FRESH_COLD:-1}" = 1 ] && rm -rf "$REPO"/build/temp.* "$REPO"/build/lib.* "$REPO"/build/bdist.*
rm -rf "$VENV"
"$PY" -m venv "$VENV"
cd /tmp
t "$VENV/bin/pip" install -q "$REPO"
t "$VENV/bin/python" -c 'import nextstate; print("import nextstate:", nextstate.__file__)'
cd "$REPO"
"$VENV/bin/python" - > "$VENV/tutorial.py" <<'EOF'
import re
text = open("README.md", encoding="utf-8").read()
section = text.split("### From five small problems to a 10× larger one in 15 lines", 1)[1]
print(re.search(r"```python\n(.*?)```", section, re.S).group(1), end="")
EOF
t "$VENV/bin/python" "$VENV/tutorial.py"
t "$VENV/bin/pip" install -q pytest wlplan==2.1.0 unified-planning up-fast-downward matplotlib mypy
t "$VENV/bin/python" -m pytest -q python/tests

"""The README's tutorial runs as written: the code block of its section
"From five small problems to a 10× larger one in 15 lines", extracted from
the document and executed from the repository root."""
import os
import re

import nextstate as ns
from conftest import REPO

DOC = os.path.join(REPO, "README.md")
HEADING = "### From five small problems to a 10× larger one in 15 lines"


def tutorial_code():
    text = open(DOC, encoding="utf-8").read()
    assert HEADING in text, f"{DOC} lacks the section '{HEADING}'"
    section = text.split(HEADING, 1)[1].split("\n#", 1)[0]
    m = re.search(r"```python\n(.*?)```", section, re.S)
    assert m, "the tutorial section has no python code block"
    return m.group(1)


def test_tutorial_block_is_15_lines():
    lines = tutorial_code().rstrip("\n").split("\n")
    assert len(lines) <= 15, f"the tutorial is {len(lines)} lines"


def test_tutorial_runs(monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    scope = {"__name__": "tutorial"}
    exec(compile(tutorial_code(), f"{DOC}:tutorial", "exec"), scope)
    out = capsys.readouterr().out
    assert re.search(r"^\d+ steps, \d+ states expanded$", out, re.M), out
    # what the block claims: 5 small problems, a plan of the 10× larger one, valid
    task, result, train = scope["task"], scope["result"], scope["train"]
    assert scope["model"].train_info["train_problems"] == 5
    assert result["solved"] and task.validate(result["plan"])["valid"]
    small = [ns.load(scope["domain"], p).info()["nobjects"] for p in sorted(train.glob("*.pddl"))]
    assert len(small) == 5 and task.info()["nobjects"] >= 10 * max(small)

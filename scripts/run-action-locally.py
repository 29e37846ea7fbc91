#!/usr/bin/env python3
"""Runs the composite GitHub Action in action.yml here, as a runner would run its steps.

    scripts/run-action-locally.py WORKDIR [input=value ...]

Each step's `if:` is evaluated, each `run:` step runs in bash in WORKDIR (the workspace) with
its `env:` and the runner's variables (GITHUB_ACTION_PATH, GITHUB_OUTPUT, GITHUB_PATH,
GITHUB_STEP_SUMMARY, RUNNER_TEMP, in a temporary folder), and the outputs a step writes to
GITHUB_OUTPUT become `steps.<id>.outputs`. A `uses:` step cannot run here (it needs GitHub):
it is printed with its `with:` evaluated, so a test sees what it would have received (the
upload step's sarif_file). Prints one JSON document: each step (name, ran or skipped, exit
code, `with:` of a `uses:` step), the action's outputs, and the step summary. Exits 0 when every
step that ran succeeded, 1 otherwise (as the job would fail).

Only the expressions action.yml uses are understood: `${{ ... }}` over `inputs.*`,
`steps.<id>.outputs.*`, `github.action_path`, `github.action_ref`, `github.action_repository`,
`runner.os`, string literals, `==`, `!=`, `&&`, `always()`; anything else is an error, so an
edit to action.yml that needs more fails the test rather than passing unseen. Needs PyYAML.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ACTION = Path(__file__).resolve().parent.parent / "action.yml"
TOKEN = re.compile(r"\s*(==|!=|&&|'[^']*'|[A-Za-z_][\w.-]*(?:\(\))?)")


class Context:
    def __init__(self, inputs, action_path):
        self.inputs = inputs
        self.steps = {}
        self.github = {
            "action_path": str(action_path),
            "action_ref": "local",
            "action_repository": "socair/socair",
        }

    def lookup(self, name):
        parts = name.split(".")
        if parts[0] == "inputs" and len(parts) == 2:
            return self.inputs[parts[1]]
        if parts[0] == "steps" and len(parts) == 4 and parts[2] == "outputs":
            return self.steps.get(parts[1], {}).get(parts[3], "")
        if parts[0] == "github" and len(parts) == 2:
            return self.github[parts[1]]
        if name == "runner.os":
            return "Linux"
        raise SystemExit(f"run-action-locally: unknown context {name!r}")

    def evaluate(self, expr):
        tokens = []
        pos = 0
        while pos < len(expr.rstrip()):
            m = TOKEN.match(expr, pos)
            if not m:
                raise SystemExit(f"run-action-locally: cannot read {expr!r} at {pos}")
            tokens.append(m.group(1))
            pos = m.end()

        def value(tok):
            if tok.startswith("'"):
                return tok[1:-1]
            if tok == "always()":
                return True
            return self.lookup(tok)

        # A conjunction (`&&`) of clauses, each a value or `value ==|!= value`.
        clauses, clause = [], []
        for tok in tokens + ["&&"]:
            if tok == "&&":
                clauses.append(clause)
                clause = []
            else:
                clause.append(tok)
        if len(clauses) == 1 and len(clauses[0]) == 1:
            return value(clauses[0][0])
        result = True
        for c in clauses:
            if len(c) == 1:
                v = value(c[0])
            elif len(c) == 3 and c[1] in ("==", "!="):
                a, b = value(c[0]), value(c[2])
                v = (a == b) if c[1] == "==" else (a != b)
            else:
                raise SystemExit(f"run-action-locally: cannot evaluate {' '.join(c)!r}")
            result = result and bool(v)
        return result

    def substitute(self, text):
        return re.sub(r"\$\{\{(.*?)\}\}", lambda m: str(self.evaluate(m.group(1))), str(text))

    def condition(self, text):
        if text is None:
            return True
        m = re.fullmatch(r"\s*\$\{\{(.*)\}\}\s*", str(text), re.S)
        return bool(self.evaluate(m.group(1) if m else str(text)))


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    workdir = Path(sys.argv[1]).resolve()
    action = yaml.safe_load(ACTION.read_text())
    given = dict(a.split("=", 1) for a in sys.argv[2:])
    inputs = {}
    for name, spec in action["inputs"].items():
        inputs[name] = given.pop(name, spec.get("default", ""))
    if given:
        raise SystemExit(f"run-action-locally: no such inputs: {sorted(given)}")
    ctx = Context(inputs, ACTION.parent)
    runner = Path(tempfile.mkdtemp(prefix="socair-action-"))
    files = {k: runner / k.lower() for k in ["GITHUB_PATH", "GITHUB_STEP_SUMMARY"]}
    for f in files.values():
        f.touch()
    path_dirs = []
    steps = []
    failed = False
    for step in action["runs"]["steps"]:
        name = step.get("name", step.get("id", ""))
        # A step runs when its condition holds and, without always(), no step before failed.
        cond = step.get("if")
        holds = ctx.condition(cond)
        if not holds or (failed and "always()" not in str(cond or "")):
            steps.append({"name": name, "ran": False})
            continue
        if "uses" in step:
            with_ = {k: ctx.substitute(v) for k, v in step.get("with", {}).items()}
            steps.append({"name": name, "ran": False, "uses": step["uses"], "with": with_})
            continue
        output = runner / f"output-{len(steps)}"
        output.touch()
        env = dict(os.environ)
        env.update({k: ctx.substitute(v) for k, v in step.get("env", {}).items()})
        env.update(
            GITHUB_ACTION_PATH=str(ACTION.parent),
            GITHUB_OUTPUT=str(output),
            GITHUB_PATH=str(files["GITHUB_PATH"]),
            GITHUB_STEP_SUMMARY=str(files["GITHUB_STEP_SUMMARY"]),
            GITHUB_WORKSPACE=str(workdir),
            RUNNER_TEMP=str(runner),
        )
        env["PATH"] = os.pathsep.join(path_dirs + [env.get("PATH", "")])
        assert step.get("shell") == "bash", f"{name}: a run step needs shell: bash"
        code = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", ctx.substitute(step["run"])],
            cwd=workdir,
            env=env,
            stdout=sys.stderr,  # the step's log; standard output is this script's document
        ).returncode
        outputs = {}
        for line in output.read_text().splitlines():
            if "=" in line:
                k, v = line.split("=", 1)
                outputs[k] = v
        if "id" in step:
            ctx.steps[step["id"]] = outputs
        path_dirs = [l for l in files["GITHUB_PATH"].read_text().splitlines() if l][::-1]
        steps.append({"name": name, "ran": True, "exit": code, "outputs": outputs})
        failed = failed or code != 0
    result = {
        "steps": steps,
        "outputs": {k: ctx.substitute(v["value"]) for k, v in action.get("outputs", {}).items()},
        "summary": files["GITHUB_STEP_SUMMARY"].read_text(),
    }
    print(json.dumps(result, indent=1))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

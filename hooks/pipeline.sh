#!/usr/bin/env bash
# An example pipeline phase wired to cairn's learning loop: an auditor challenges a plan and a
# curator validates the audit. Your orchestrator runs the agents; cairn only reads and writes text
# around them, in three steps:
#
#   hooks/pipeline.sh before --issue LED-101 --run r1 --files src/cli/status.ts --labels cli \
#                            --query-file issue.md            > auditor-block.txt
#     ... append auditor-block.txt to the auditor's prompt; run the auditor, then the curator ...
#   hooks/pipeline.sh after  --issue LED-101 --run r1 --files src/cli/status.ts --labels cli \
#                            --adversarial-text plan/auditor.md --validator-text plan/curator.md
#   hooks/pipeline.sh end    --issue LED-101 --run r1 --result pass [--report landing.json]
#
# --files, --labels and --phase give the context the patterns are scored against (a pattern learned
# on the same files or labels ranks higher); --query-file (or --query) ranks by relevance to the
# issue text and adds matching landing patterns. Pass the same values to `before` and `after`.
# Other roles: --adversarial judge --validator inspector (review), sentinel/lens (QA).
# Every cairn step fails open: a broken store never stops the pipeline (CAIRN_STRICT=1 to debug).
#
# cairn itself: $CAIRN_BIN if set (e.g. "node /opt/cairn/bin/cairn.js"), else the cairn this script
# ships with (node_modules/cairn/hooks/, a global install or a checkout), else the project's
# node_modules/.bin, else PATH (for a copy of this script in your own repository). Never npx: it
# costs about half a second per call, and does not find a global install outside npm's own prefix.
set -u
here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
if [ -n "${CAIRN_BIN:-}" ]; then read -r -a cairn <<< "$CAIRN_BIN"
elif [ -f "$here/../bin/cairn.js" ]; then cairn=(node "$here/../bin/cairn.js")
elif [ -x node_modules/.bin/cairn ]; then cairn=(node_modules/.bin/cairn)
else cairn=(cairn)
fi

step=${1:-}
shift || true
issue='' run='' adversarial=auditor validator=curator phase=plan files='' labels='' query='' query_file=''
adversarial_text='' validator_text='' result='' report=''
while [ $# -gt 0 ]; do
  case $1 in
    --issue) issue=$2 ;;
    --run) run=$2 ;;
    --adversarial|--adversarial-role) adversarial=$2 ;; # feedback-loop's own names are accepted too
    --validator|--validator-role) validator=$2 ;;
    --phase) phase=$2 ;;
    --files) files=$2 ;;
    --labels) labels=$2 ;;
    --query) query=$2 ;;
    --query-file) query_file=$2 ;;
    --adversarial-text) adversarial_text=$2 ;;
    --validator-text) validator_text=$2 ;;
    --result) result=$2 ;;
    --report) report=$2 ;;
    *) echo "pipeline.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift 2
done
[ -n "$issue" ] && [ -n "$run" ] || { echo "usage: pipeline.sh before|after|end --issue I --run R [...] (see the comments)" >&2; exit 2; }

scope=(--issue "$issue" --run "$run")
context=(--phase "$phase")
[ -n "$files" ] && context+=(--files "$files")
[ -n "$labels" ] && context+=(--labels "$labels")

case $step in
  before)
    # The patterns to put into the adversarial agent's prompt (nothing when nothing fits).
    relevance=()
    [ -n "$query" ] && relevance=(--query "$query")
    [ -n "$query_file" ] && relevance=(--query-file "$query_file")
    "${cairn[@]}" format-patterns --role "$adversarial" "${scope[@]}" "${context[@]}" ${relevance[@]+"${relevance[@]}"}
    ;;
  after)
    # Store what each agent said, then correct the adversarial role's patterns with the verdict.
    [ -n "$adversarial_text" ] && [ -n "$validator_text" ] || { echo "pipeline.sh after: --adversarial-text and --validator-text are required" >&2; exit 2; }
    "${cairn[@]}" store-deliberation --role "$adversarial" "${scope[@]}" "${context[@]}" --file "$adversarial_text"
    "${cairn[@]}" store-deliberation --role "$validator" "${scope[@]}" "${context[@]}" --file "$validator_text"
    feedback_files=()
    [ -n "$files" ] && feedback_files=(--files "$files")
    "${cairn[@]}" feedback-loop --adversarial-role "$adversarial" --validator-role "$validator" "${scope[@]}" ${feedback_files[@]+"${feedback_files[@]}"}
    ;;
  end)
    # When the whole pipeline has finished (after its last phase): grade what was applied, and on a
    # pass keep the landing as a pattern of how the work was done.
    [ -n "$result" ] || { echo "pipeline.sh end: --result pass|fail is required" >&2; exit 2; }
    landing=()
    [ -n "$report" ] && landing=(--report "$report")
    "${cairn[@]}" outcome-score "${scope[@]}" --result "$result" ${landing[@]+"${landing[@]}"} < /dev/null
    ;;
  *)
    echo "usage: pipeline.sh before|after|end --issue I --run R [...] (see the comments)" >&2
    exit 2
    ;;
esac

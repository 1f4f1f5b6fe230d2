#!/usr/bin/env bash
# An example pipeline phase wired to cairn's learning loop: one adversarial role checked by one
# validator. Your orchestrator runs the agents; cairn only reads and writes text around them.
#
#   hooks/pipeline.sh ISSUE RUN ADVERSARIAL_ROLE VALIDATOR_ROLE ADVERSARIAL_TEXT VALIDATOR_TEXT
#
# e.g. hooks/pipeline.sh LED-101 r1 auditor curator plan/auditor.md plan/curator.md
# Every cairn step fails open: a broken store never stops the pipeline.
set -u
issue=$1 run=$2 adversarial=$3 validator=$4 adversarial_text=$5 validator_text=$6
cairn=${CAIRN_BIN:-npx --no-install}

# 1. Before the adversarial agent runs: the patterns to put into its prompt (empty when none fit).
block=$($cairn format-patterns --role "$adversarial" --issue "$issue" --run "$run")
printf '%s\n' "$block" > "${TMPDIR:-/tmp}/cairn-$adversarial-$run.block"
# ... your orchestrator appends "$block" to the adversarial agent's prompt and runs it ...

# 2. After each agent: store what it said.
$cairn store-deliberation --role "$adversarial" --issue "$issue" --run "$run" --file "$adversarial_text"
$cairn store-deliberation --role "$validator" --issue "$issue" --run "$run" --file "$validator_text"

# 3. Correct the adversarial role's patterns with the validator's verdict.
$cairn feedback-loop --adversarial-role "$adversarial" --validator-role "$validator" --issue "$issue" --run "$run"

# 4. When the whole pipeline has finished (after its last phase), grade what was injected:
#    $cairn outcome-score --issue "$issue" --run "$run" --result pass

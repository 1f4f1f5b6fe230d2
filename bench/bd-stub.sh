#!/bin/sh
# A stand-in for `bd` (beads) on PATH, for tests and benchmarks — a small native-speed script, as bd
# itself is a native binary: `bd list --status=S --json` prints, as a JSON array, the issues of
# $BD_STUB_ISSUES (a `bd export` JSONL file) with status S, after sleeping $BD_STUB_DELAY seconds
# (e.g. 0.02). Anything else exits 1, as bd does for a command it cannot run here.
case "$1 $2 $3" in
  "list --status="*" --json") ;;
  *) echo "bd stub: unsupported: $*" >&2; exit 1 ;;
esac
status=${2#--status=}
if [ -n "$BD_STUB_DELAY" ]; then sleep "$BD_STUB_DELAY"; fi
printf '['
grep "\"status\": *\"$status\"" "$BD_STUB_ISSUES" | paste -sd, -
printf ']\n'

#!/usr/bin/env node
// A stand-in for `bd` (beads) on PATH, for tests and benchmarks: `bd list --status=S --json` prints the
// issues of BD_STUB_ISSUES (a `bd export` JSONL file) that have status S, after BD_STUB_DELAY_MS.
// Anything else exits 1, as bd does for a command it cannot run here.
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const status = args.find((a) => a.startsWith('--status='))?.slice('--status='.length);
if (args[0] !== 'list' || !args.includes('--json') || !status) {
  process.stderr.write(`bd stub: unsupported: ${args.join(' ')}\n`);
  process.exit(1);
}
const issues = readFileSync(process.env.BD_STUB_ISSUES, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l))
  .filter((i) => i.status === status);
setTimeout(() => process.stdout.write(JSON.stringify(issues) + '\n'), Number(process.env.BD_STUB_DELAY_MS ?? 0));

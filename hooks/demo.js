#!/usr/bin/env node
// `npm run demo`: a scripted multi-run pipeline over fixtures/deliberations in a temporary project,
// on the embedded default (SQLite + JSONL, no server). It shows the auditor's injected block change
// as the curator's dismissals penalise a recurring false alarm and evidence-backed PASSes reinforce
// the checks that hold up.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const fixtures = join(repo, 'fixtures', 'deliberations');
const project = mkdtempSync(join(tmpdir(), 'cairn-demo-'));
mkdirSync(join(project, '.git'));

let day = 0;
function cairn(name, args) {
  const env = { ...process.env, CAIRN_NOW: new Date(Date.UTC(2026, 10, 1 + day)).toISOString() };
  const r = spawnSync(process.execPath, [join(repo, 'bin', `${name}.js`), ...args], { cwd: project, env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${name} exited ${r.status}: ${r.stderr}`);
  return r;
}
const show = (title, text) => console.log(`\n--- ${title} ---\n${text.trim() || '(nothing injected)'}`);

const runs = [
  ['LED-101', 'r1'],
  ['LED-101', 'r2'],
  ['LED-102', 'r1'],
  ['LED-103', 'r1'],
];

try {
  cairn('cairn', ['init', '--quiet']);
  console.log(`cairn demo in ${project}`);
  for (const [issue, run] of runs) {
    const scope = ['--issue', issue, '--run', run];
    const base = `${issue.toLowerCase()}-${run}-plan`;
    const block = cairn('format-patterns', ['--role', 'auditor', ...scope]).stdout;
    show(`${issue} ${run}: block injected into the auditor`, block);
    cairn('store-deliberation', ['--role', 'auditor', ...scope, '--phase', 'plan', '--file', join(fixtures, `${base}-auditor.md`)]);
    cairn('store-deliberation', ['--role', 'curator', ...scope, '--phase', 'plan', '--file', join(fixtures, `${base}-curator.md`)]);
    const feedback = cairn('feedback-loop', ['--adversarial-role', 'auditor', '--validator-role', 'curator', ...scope]);
    console.log(feedback.stderr.trim());
    console.log(cairn('outcome-score', [...scope, '--result', 'pass']).stderr.trim());
    day += 1;
  }
  show('after four runs', cairn('format-patterns', ['--role', 'auditor']).stdout);
  console.log('\nThe recurring false alarm ("man page") is gone; validated checks carry their record.');
  console.log(cairn('cairn', ['explain', 'man page documented']).stdout);
} finally {
  rmSync(project, { recursive: true, force: true });
}

import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { cleanEnv, REPO } from './helpers.js';

// `npm run demo` (SPEC §7) runs in CI: it finishes, and its output reaches each milestone.

describe('npm run demo', () => {
  it('shows the block change as false alarms are penalised and evidence-backed patterns reinforced, a landing, then capture → recall', () => {
    const r = spawnSync(process.execPath, [join(REPO, 'hooks', 'demo.js')], {
      cwd: REPO,
      env: cleanEnv(),
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    const out = r.stdout;
    const milestones = [
      /━━ Run 1 · LED-101 r1 · day 1 ━+\nBlock injected into the auditor: \(empty — nothing learned yet\)/,
      /✗ dismissed A\d as a false positive → penalised: Every new CLI flag must be documented in the man page before merge/,
      /━━ Run 2 · LED-101 r2 · day 2 ━+\nBlock injected into the auditor \(\d+ patterns, \d+ tokens; \+ new since the last run\):\n {2}\+ /,
      /\n {2}\+ Every new CLI flag must be documented in the man page before merge \(-1 net, 1x ignored\)\n/, // the false alarm is injected, with its record
      /✓ reinforced \d+ pattern\(s\) the auditor applied: the pass is backed by evidence/,
      /━━ Run 3 [^\n]*\n[\s\S]*?\(1x validated\)\n/, // a later block shows a record earned by validation
      /\n {4}Every new CLI flag must be documented in the man page before merge \(-2 net, 2x ignored\)\n/,
      /✗ retired \(dismissed too often\): Every new CLI flag must be documented in the man page before merge/,
      /━━ Run 4 [^\n]*\n[\s\S]*?\n {2}- dropped: Every new CLI flag must be documented in the man page before merge/,
      /What changed:\n {2}✓ false alarm: dismissed in 3 runs → it was in the block and has dropped out: "Every new CLI flag must be documented in the man page before merge"/,
      /✓ \d+ pattern\(s\) now carry their record \("\dx validated"\)/,
      /The last run passed with a landing report: captured "Build a clinic command center"/,
      /\n {4}Pattern: Build a clinic command center — files: apps\/api\/src\/server\.ts/,
      /Session 1 starts → auto-recall injects: \(nothing\)/,
      /The agent runs: bd comments add led-142 "LEARNED: OAuth redirect URI/,
      /→ memory-capture keeps it in \.cairn\/memory\/knowledge\.jsonl as learned-oauth-redirect-uri-must-match/,
      /Session 2 starts → auto-recall injects:\n {4}## Relevant knowledge from memory\n[\s\S]*?\n {4}- \[LEARNED\] OAuth redirect URI must match the registered one exactly/,
      /The user asks "[^"]+" → auto-recall \(UserPromptSubmit\) finds, by relevance:\n {4}- \[LEARNED\] OAuth[^\n]*\n {4}Pattern: Build a clinic command center/,
      /\d+ pipeline runs, a landing and two sessions in \d+\.\d s\./,
      /\nThe throwaway project is deleted now; npm run demo -- --keep keeps it to look around in\.\n$/,
    ];
    let at = 0;
    for (const milestone of milestones) {
      const m = milestone.exec(out.slice(at));
      expect(m, `milestone ${milestone} (in order)`).not.toBeNull();
      at += m!.index + m![0].length;
    }
    const finalBlock = out.slice(out.indexOf('the block the auditor gets next'), out.indexOf('What changed:'));
    expect(finalBlock.split('\n').length).toBeGreaterThan(3);
    expect(finalBlock).not.toContain('man page'); // the false alarm is not what the auditor gets next
  });
});

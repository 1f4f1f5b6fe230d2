import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { patternId } from '../lib/core/ids.js';
import { projectIdFor } from '../lib/store/root.js';
import { cleanEnv, REPO } from './helpers.js';

// Stores for `cairn report`'s tests (test/report.test.ts, and the browser's, test/report.browser.ts).

/** Text an attacker could commit into any log: markup, a script URL, bidi controls, a token. */
export const HOSTILE =
  'Never merge <script>window.__cairnXss=1</script> nor </svg><img src=x onerror="window.__cairnXss=2"> ' +
  '<a href="javascript:window.__cairnXss=3">javascript:alert(1)</a> \u202eevil\u202c ghp_0123456789abcdefghijklmnopqrstuvwxyzAB';
export const HOSTILE_TOKEN = 'ghp_0123456789abcdefghijklmnopqrstuvwxyzAB';

/** When the hostile project's report is made: its patterns are fresh then. */
export const HOSTILE_NOW = '2026-03-04T10:00:00.000Z';

/**
 * A project whose logs hold HOSTILE in every text the report shows: a pattern (given to the auditor in
 * two runs, dismissed in one), a knowledge entry with hostile tags and bead, a landing pattern and a
 * sanitiser audit record. Written as lines, as an attacker with commit access would.
 */
export function hostileProject(dir: string): string {
  mkdirSync(join(dir, '.git'), { recursive: true });
  mkdirSync(join(dir, '.cairn', 'memory'), { recursive: true });
  const project = projectIdFor(dir);
  writeFileSync(join(dir, '.cairn', 'config.json'), JSON.stringify({ project }));
  const id = patternId(project, 'auditor', HOSTILE);
  const other = patternId(project, 'auditor', 'Plans must name the test file for each acceptance criterion');
  let n = 0;
  const event = (type: string, payload: Record<string, unknown>) =>
    JSON.stringify({
      v: 1,
      id: `01KM7XCQ80RSXABJ0VBY59${String(1000 + n).slice(-4)}`,
      ts: `2026-03-0${1 + Math.floor(n++ / 3)}T10:00:00.000Z`,
      type,
      project: project,
      ...payload,
    });
  const scope = (run: string) => ({ issue: 'LED-1<b>', run });
  const observed = (pattern: string, text: string) => ({
    pattern,
    role: 'auditor',
    text,
    category: 'rule',
    phase: null,
    labels: [],
    files: [],
    deliberation: 'd1',
    ...scope('r1'),
  });
  const lines = [
    event('pattern.observed', observed(id, HOSTILE)),
    event('pattern.observed', observed(other, 'Plans must name the test file for each acceptance criterion')),
    event('pattern.injected', { role: 'auditor', patterns: [id, other], path: 'full', tokens: 40, ...scope('r2') }),
    event('pattern.ignored', {
      pattern: id,
      role: 'auditor',
      weight: 1,
      finding: 'A1<script>',
      retract: false,
      ...scope('r2'),
    }),
    event('pattern.reinforced', { pattern: other, finding: 'A2', ...scope('r2') }),
    event('pattern.injected', { role: 'auditor', patterns: [id, other], path: 'full', tokens: 40, ...scope('r3') }),
    event('pattern.reinforced', { pattern: id, finding: 'A1', ...scope('r3') }),
  ];
  writeFileSync(join(dir, '.cairn', 'events.jsonl'), lines.join('\n') + '\n');
  const entry = {
    key: 'learned-never-merge',
    type: 'learned',
    content: HOSTILE,
    source: 'user',
    tags: ['learned', '<script>'],
    ts: 1772359200,
    bead: '<b>bd-1</b>',
    project: project,
  };
  writeFileSync(join(dir, '.cairn', 'memory', 'knowledge.jsonl'), JSON.stringify(entry) + '\n');
  const landing = {
    id: 'lp-1',
    sourceRepoRoot: project,
    missionId: null,
    reportId: null,
    title: HOSTILE,
    summary: HOSTILE,
    prompt: null,
    tags: ['<script>', 'javascript:alert(1)'],
    examplePaths: ['</svg>'],
    commands: ['javascript:alert(1)'],
    createdAt: '2026-03-01T00:00:00.000Z',
    updatedAt: '2026-03-02<script>',
  };
  writeFileSync(join(dir, '.cairn', 'landing-patterns.json'), JSON.stringify([landing]));
  const audit = [
    {
      ts: 1772359200,
      action: 'filter_noise',
      key: '<script>window.__cairnXss=4</script>',
      reason: `</svg> ${HOSTILE}`,
    },
    { ts: 1772359200, action: 'summary', summary: { read: 2, active: 1 } },
  ];
  appendFileSync(join(dir, '.cairn', 'memory', 'knowledge.audit.jsonl'), audit.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return dir;
}

/** `npm run demo -- --keep`'s project (the four-run pipeline over the fixtures), left for the caller to remove. */
export function demoProject(): string {
  const r = spawnSync(process.execPath, [join(REPO, 'hooks', 'demo.js'), '--keep'], {
    cwd: REPO,
    env: cleanEnv(),
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`the demo failed: ${r.stderr}`);
  return /The project is kept in (\S+)\. /.exec(r.stdout)![1];
}

/** A store of `patterns` auditor patterns (and a twentieth of that for three other roles) with a working pipeline's events. */
export async function largeProject(patterns: number): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-report-large-'));
  const { makeProject, writeEventLog } = await import(join(REPO, 'bench', 'stores.js'));
  makeProject(dir);
  const small = Math.max(1, Math.round(patterns / 20));
  writeEventLog(join(dir, '.cairn', 'events.jsonl'), {
    patterns: { auditor: patterns, judge: small, sentinel: small, curator: small },
    nowMs: Date.parse('2026-04-20T10:00:00.000Z'),
    seed: 7,
  });
  return dir;
}

// Two ways to drive cairn through a pipeline step, with one interface:
//   libraryDriver  — the library calls the executables make (dist/lib), on one Store opened the way
//                    test/helpers.ts openTestStore does: fast, for many runs and many seeds;
//   processDriver  — the real bin/*.js executables, one process per step (spawnSync), as a pipeline
//                    runs them: slower, to show that the two agree.
// Every step takes `now` (ISO): the simulated clock, given to cairn as CAIRN_NOW. The roles default to
// the auditor/curator pair; a world with more pairs names them (`role` of format and inspect,
// `adversarialRole`/`validatorRole` of feedback).

import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = (name) => import(join(REPO, 'dist', 'lib', `${name}.js`));

const PROJECT = 'learning-sim';
export const ADVERSARY = 'auditor';
export const VALIDATOR = 'curator';

const [
  { Store },
  { locate },
  { Deadline },
  { createLogger },
  { initStore },
  { sameKindRoles },
  { patternDb },
  format,
  deliberation,
  feedback,
  outcome,
  patterns,
  scoring,
] = await Promise.all(
  [
    'store/store',
    'store/root',
    'core/deadline',
    'core/logger',
    'store/init',
    'store/config',
    'events/log',
    'patterns/format',
    'patterns/deliberation',
    'patterns/feedback',
    'patterns/outcome',
    'patterns/queries',
    'patterns/scoring',
  ].map(dist),
);

/** What the simulation keeps of a feedback-loop report: counts, and which pattern each dismissal landed on. */
function feedbackRecord(r) {
  return {
    gate: r.gate,
    penalised: r.penalised.length,
    unmatched: r.unmatched.length,
    reinforced: r.reinforced.length,
    penalties: r.penalised.map((x) => ({ finding: x.finding, text: x.text, match: x.match })),
  };
}

function openStore(root) {
  return new Store(locate({ root, project: PROJECT }), new Deadline(0), createLogger('bench-learning', true), true);
}

/** A fresh project directory with an initialised store. */
function prepareProject(root) {
  mkdirSync(join(root, '.git'), { recursive: true });
  initStore(join(root, '.cairn'));
}

/** What the store holds right now, read in-process whichever driver wrote it: `role`'s candidates, every pattern. */
function inspectStore(store, now, role = ADVERSARY) {
  process.env.CAIRN_NOW = now;
  const ranked = patterns.rankPatterns(patternDb(store), store.project, {
    roles: sameKindRoles(store.config, role),
    ctx: { now: Date.parse(now), role },
  });
  const all = patterns.listPatterns(patternDb(store), store.project, { includeDeprecated: true });
  return {
    candidates: ranked.map((r) => ({ id: r.pattern.id, text: r.pattern.text, score: r.score })),
    patterns: all.map((p) => ({ ...p, score: scoring.scorePattern(p, { now: Date.parse(now), role }).base })),
  };
}

const blockOf = (r) => ({
  path: r.path,
  tokens: r.tokens,
  patterns: r.patterns.map((p) => ({ id: p.id, text: p.text, record: p.record })),
});

export function libraryDriver(root) {
  prepareProject(root);
  const store = openStore(root);
  const at = (now) => (process.env.CAIRN_NOW = now);
  return {
    format({ now, issue, run, budget, ids, role = ADVERSARY }) {
      at(now);
      const result = format.formatPatterns(store, {
        role,
        issue,
        run,
        labels: [],
        files: [],
        phase: null,
        budget,
        exactTokens: true,
        ids,
      });
      format.recordInjection(store, result, issue, run);
      return blockOf(result);
    },
    store({ now, role, issue, run, text }) {
      at(now);
      deliberation.storeDeliberation(store, {
        text,
        role,
        issue,
        run,
        phase: 'plan',
        iteration: 1,
        labels: [],
        files: [],
      });
    },
    feedback({ now, issue, run, adversarialText, validatorText, adversarialRole = ADVERSARY, validatorRole = VALIDATOR }) {
      at(now);
      const r = feedback.runFeedback(store, {
        adversarialRole,
        validatorRole,
        issue,
        run,
        files: [],
        adversarialText,
        validatorText,
        dryRun: false,
      });
      return feedbackRecord(r);
    },
    outcome({ now, issue, run, result }) {
      at(now);
      outcome.scoreOutcome(store, issue, run, result);
    },
    inspect: (now, role) => inspectStore(store, now, role),
    close: () => store.close(),
  };
}

export function processDriver(root) {
  prepareProject(root);
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CAIRN_')));
  let files = 0;
  const exec = (name, args, now, input = '') => {
    const r = spawnSync(process.execPath, [join(REPO, 'bin', `${name}.js`), ...args, '--root', root, '--project', PROJECT, '--strict'], {
      cwd: root,
      env: { ...env, CAIRN_NOW: now },
      input,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    if (r.status !== 0) throw new Error(`${name} ${args.join(' ')} exited ${r.status}: ${r.stderr.trim()}`);
    return r.stdout;
  };
  const scoped = (issue, run) => [...(issue ? ['--issue', issue] : []), ...(run ? ['--run', run] : [])];
  const tempFile = (text) => {
    const path = join(root, `text-${++files}.md`);
    writeFileSync(path, text);
    return path;
  };
  return {
    format({ now, issue, run, budget, ids, role = ADVERSARY }) {
      return blockOf(
        JSON.parse(
          exec(
            'format-patterns',
            ['--role', role, ...scoped(issue, run), '--budget', String(budget), ...(ids ? ['--ids'] : []), '--json'],
            now,
          ),
        ),
      );
    },
    store({ now, role, issue, run, text }) {
      exec('store-deliberation', ['--role', role, ...scoped(issue, run), '--phase', 'plan', '--iteration', '1'], now, text);
    },
    feedback({ now, issue, run, adversarialText, validatorText, adversarialRole = ADVERSARY, validatorRole = VALIDATOR }) {
      const texts = [
        ...(adversarialText === undefined ? [] : ['--adversarial-file', tempFile(adversarialText)]),
        ...(validatorText === undefined ? [] : ['--validator-file', tempFile(validatorText)]),
      ];
      const r = JSON.parse(
        exec(
          'feedback-loop',
          ['--adversarial-role', adversarialRole, '--validator-role', validatorRole, ...scoped(issue, run), ...texts, '--json'],
          now,
        ),
      );
      return feedbackRecord(r);
    },
    outcome({ now, issue, run, result }) {
      exec('outcome-score', [...scoped(issue, run), '--result', result, '--json'], now);
    },
    inspect(now, role) {
      const store = openStore(root);
      try {
        return inspectStore(store, now, role);
      } finally {
        store.close();
      }
    },
    close() {},
  };
}

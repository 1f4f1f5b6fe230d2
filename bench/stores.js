// Benchmark stores, written directly as .cairn/events.jsonl in cairn's event format (lib/events/types.ts)
// and indexed by one `cairn rebuild`. Ids and timestamps increase line by line, as appendEvents
// writes them, so the log is in replay order.

import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHash } from 'node:crypto';
import { nextUlid, patternId } from '../dist/lib/core/ids.js';
import { classify } from '../dist/lib/patterns/extract.js';
import { initStore } from '../dist/lib/store/init.js';
import { keyOf, tagsFor } from '../dist/lib/knowledge/entry.js';
import { rng, patternTexts } from './corpus.js';

export const PROJECT = 'benchproject0001';
const DAY = 86_400_000;
const LABELS = ['cli', 'api', 'database', 'auth', 'security', 'billing', 'jobs', 'docs'];
const FILES = [
  'src/cli/status.ts',
  'src/api/invoices.ts',
  'src/auth/session.ts',
  'src/db/migrations/0042_add_due_date.sql',
  'src/billing/ledger.ts',
  'src/queue/consumer.ts',
  'test/status.test.ts',
  'README.md',
];
const PHASES = { auditor: 'plan', curator: 'plan', judge: 'review', inspector: 'review', sentinel: 'qa', lens: 'qa' };

/** A project directory with an initialised .cairn/ store (and .git/, so it is a project root). */
export function makeProject(dir) {
  mkdirSync(join(dir, '.git'), { recursive: true });
  initStore(join(dir, '.cairn'));
  return dir;
}

/**
 * Write an event log for `patterns` = {role: count} distinct patterns, observed 8 to a deliberation,
 * with re-sightings and the feedback events of a working pipeline (injections, dismissals,
 * reinforcements, aging, outcomes, promotions, deprecations, summaries). Timestamps spread over the
 * `days` before `nowMs`. With `limit`, stop after exactly that many events.
 * Returns {events, known: {role: [{id, text, category}]}, counts: {type: n}}.
 */
export function writeEventLog(path, { patterns, nowMs, days = 30, seed = 1, limit, resight = 0.2, vocabulary = 'small' }) {
  const r = rng(seed);
  const roles = Object.keys(patterns);
  const total = Object.values(patterns).reduce((a, b) => a + b, 0);
  const texts = {};
  let offset = 0;
  for (const role of roles) {
    texts[role] = patternTexts(patterns[role], seed * 1000 + offset++, new Set(), vocabulary);
  }
  const next = Object.fromEntries(roles.map((role) => [role, 0])); // texts introduced so far per role
  const known = Object.fromEntries(roles.map((role) => [role, []])); // pattern ids per role

  // Events per introduced pattern, roughly: 1 observed + resight + 1/8 deliberation + feedback.
  const expected = limit ?? Math.ceil(total * (1 + resight / (1 - resight) + 0.125 + 0.5));
  const start = nowMs - days * DAY;
  const step = (days * DAY - 3_600_000) / expected;
  let n = 0;
  let lastId;
  let lastTs;
  const counts = {};
  // the latest first sighting per role, as store-summary records it with a summary (over the roles of its kind)
  const newestFirstSeen = {};
  const KIND = { auditor: 'adversarial', judge: 'adversarial', sentinel: 'adversarial', curator: 'validator' };
  const fd = openSync(path, 'w');
  let buffer = [];
  const flush = () => {
    if (buffer.length) writeSync(fd, buffer.join('\n') + '\n');
    buffer = [];
  };
  const emit = (payload) => {
    if (limit !== undefined && n >= limit) return false;
    const ms = Math.floor(start + n * step);
    lastId = nextUlid(ms, lastId);
    lastTs = new Date(ms).toISOString();
    const { type, ...rest } = payload;
    buffer.push(JSON.stringify({ v: 1, id: lastId, ts: lastTs, type, project: PROJECT, ...rest }));
    counts[type] = (counts[type] ?? 0) + 1;
    n++;
    if (buffer.length >= 5000) flush();
    return true;
  };
  const some = (list, k) => Array.from({ length: Math.min(k, list.length) }, () => r.pick(list));
  const weights = roles.map((role) => patterns[role] / total);
  const pickRole = () => {
    let x = r.next();
    for (let i = 0; i < roles.length; i++) if ((x -= weights[i]) < 0) return roles[i];
    return roles[roles.length - 1];
  };

  let d = 0;
  const remaining = () => roles.some((role) => next[role] < texts[role].length);
  while (limit !== undefined ? n < limit : remaining()) {
    const role = pickRole();
    const issue = `LED-${100 + (d % 400)}`;
    const run = `r${1 + r.int(3)}`;
    const labels = [...new Set(some(LABELS, 1 + r.int(2)))];
    const files = [...new Set(some(FILES, 1 + r.int(3)))];
    const deliberation = 'd' + nextUlid(Math.floor(start + n * step)).toLowerCase();
    const scope = { issue, run };
    if (
      !emit({
        type: 'deliberation.stored',
        deliberation,
        role,
        ...scope,
        phase: PHASES[role] ?? null,
        iteration: 1,
        labels,
        files,
        verdict: null,
        evidence: r.pick(['L1', 'L2', 'L3']),
        hash: createHash('sha256').update(deliberation).digest('hex'),
        size: 3000 + r.int(4000),
        path: `artifacts/deliberations/${deliberation}.md`,
      })
    )
      break;
    d++;
    const ids = known[role];
    for (let i = 0; i < 8; i++) {
      const fresh = next[role] < texts[role].length && !(ids.length > 0 && r.chance(resight));
      if (!fresh && ids.length === 0) break;
      let seen;
      if (fresh) {
        const { category, text } = classify(texts[role][next[role]++]);
        seen = { id: patternId(PROJECT, role, text), text, category };
        ids.push(seen);
      } else seen = ids[r.int(ids.length)];
      if (
        emit({
          type: 'pattern.observed',
          pattern: seen.id,
          role,
          text: seen.text,
          category: seen.category,
          ...scope,
          phase: PHASES[role] ?? null,
          labels,
          files,
          deliberation,
        }) &&
        fresh
      )
        newestFirstSeen[role] = lastTs;
    }
    if (ids.length === 0) continue;
    // The feedback a pipeline produces around a deliberation.
    if (r.chance(0.6))
      emit({
        type: 'pattern.injected',
        role,
        ...scope,
        patterns: some(ids, 10 + r.int(15)).map((p) => p.id),
        path: r.pick(['full', 'truncated']),
        tokens: 300 + r.int(500),
      });
    if (r.chance(0.5))
      emit({
        type: 'pattern.ignored',
        pattern: r.pick(ids).id,
        role,
        ...scope,
        weight: r.pick([1, 1, 1.5]),
        finding: `A${1 + r.int(4)}`,
        retract: r.chance(0.3),
      });
    if (r.chance(0.5)) emit({ type: 'pattern.reinforced', pattern: r.pick(ids).id, ...scope });
    if (r.chance(0.15)) emit({ type: 'pattern.aged', pattern: r.pick(ids).id, ...scope });
    if (r.chance(0.1))
      emit({
        type: 'pattern.outcome',
        ...scope,
        result: r.pick(['pass', 'pass', 'fail']),
        patterns: some(ids, 8).map((p) => ({ pattern: p.id, weight: 1 })),
      });
    if (r.chance(0.01)) emit({ type: 'pattern.promoted', pattern: r.pick(ids).id, by: 'bench', reason: 'benchmark data' });
    if (r.chance(0.01)) emit({ type: 'pattern.deprecated', pattern: r.pick(ids).id, reason: 'benchmark data', auto: r.chance(0.5) });
    if (r.chance(0.01)) {
      const newest = roles
        .filter((other) => KIND[other] === KIND[role] && newestFirstSeen[other])
        .map((other) => newestFirstSeen[other])
        .sort()
        .at(-1);
      emit({
        type: 'summary.stored',
        role,
        basis: createHash('sha256').update(String(d)).digest('hex').slice(0, 32),
        text: `- ${r.pick(ids).text}`,
        newest,
      });
    }
  }
  flush();
  closeSync(fd);
  return { events: n, known, counts };
}

// ---------------------------------------------------------------------------------------------
// knowledge logs, generated from the real Lavra data (fixtures/knowledge: 217 entries, 538 comments):
// each entry takes a real note as its body and varies it (a real comment's sentence spliced in, a
// numbered detail), so term statistics are those of real notes and every content is distinct.

const FIX = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'knowledge');

function realData() {
  const notes = readFileSync(join(FIX, 'knowledge.main-f048edf.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => {
      const o = JSON.parse(l);
      return typeof o === 'string' ? JSON.parse(o) : o;
    });
  const comments = ['comments.newest-73fd2a9.jsonl', 'comments.largest-d298489.jsonl'].flatMap((f) =>
    readFileSync(join(FIX, f), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l)),
  );
  const sentences = comments
    .flatMap((c) => c.text.replace(/^[A-Z-]+:\s*/, '').split(/(?<=[.;])\s+/))
    .filter((s) => s.length > 20 && s.length < 240);
  const beads = readFileSync(join(FIX, 'issues.main-f048edf.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l).id);
  return { notes, sentences, beads };
}

/** A knowledge.jsonl of `entries` entries of `project` in cairn's format, oldest first, over the 400 days before `nowMs`. */
export function writeKnowledgeLog(path, { entries, seed, project, nowMs }) {
  const { notes, sentences, beads } = realData();
  const { pick } = rng(seed);
  const start = nowMs / 1000 - 400 * 86400;
  const lines = [];
  for (let i = 0; i < entries; i++) {
    const note = pick(notes);
    const content = `${note.content.split('\n')[0].slice(0, 400)} ${pick(sentences)} (detail ${i})`;
    const entry = {
      key: keyOf(note.type, `${i} ${content}`),
      type: note.type,
      content,
      source: 'hook',
      tags: tagsFor(note.type, content),
      ts: Math.floor(start + (i * 400 * 86400) / entries),
      bead: pick(beads),
      project,
    };
    lines.push(JSON.stringify(entry));
  }
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, lines.join('\n') + '\n');
}

import { describe, it, expect } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run as runBin, tempProject, type RunOptions } from './helpers.js';
import { sanitizeUntrusted } from '../lib/core/sanitize.js';
import { redactSecrets } from '../lib/core/secrets.js';
import { normaliseText, stripMarkdown, contentTerms, indexTerms } from '../lib/core/text.js';
import { simpleCommands } from '../lib/core/shell.js';
import { accumulatedPatternItems, extractPatterns } from '../lib/patterns/extract.js';
import { parseVerdict, withoutVerdictBlocks } from '../lib/patterns/verdict.js';
import { evidenceLevel } from '../lib/patterns/evidence.js';
import { citedIds, summaryWithoutCitations } from '../lib/patterns/link.js';
import { findingNamedByLine, validatorReason } from '../lib/patterns/finding-prose.js';
import { bdComments } from '../lib/knowledge/bd-command.js';
import { parseEntryLine } from '../lib/knowledge/reader.js';
import { parseTypedText, tagsFor, slugOf } from '../lib/knowledge/entry.js';
import { isCommandLike } from '../lib/knowledge/noise.js';
import { recallTerms } from '../lib/knowledge/search.js';
import { parseLandingReport } from '../lib/landing/report.js';
import { landingTags } from '../lib/landing/tags.js';
import { readHookInput } from '../lib/hosts/payload.js';
import { parseJsonLine } from '../lib/io/jsonl.js';

// Every parser and regex that reads untrusted text runs in time linear in its input (SPEC §4.6). Each
// entry point is fed hostile runs — every ASCII punctuation character, every secret prefix, markup, and
// alternations of them, and long runs of one character ended by what a backtracking scan hopes for —
// at 10 kB; the runs it is slowest on (a quadratic scan is already orders of magnitude slower there)
// again at 100 kB, and the slowest of those at 1 MB. Linear work grows ~10× per step, quadratic ~100×.
// Bounds are ratios with generous slack (a loaded machine), never absolute times.

const PUNCTUATION = [...'!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~'];
const SECRET_PREFIXES = [
  'eyJ',
  'ghp_',
  'github_pat_',
  'glpat-',
  'xoxb-',
  'sk-',
  'sk_live_',
  'AKIA',
  'AIza',
  'npm_',
  '-----BEGIN ',
  'password=',
  'PASSWORD: ',
  'api_key": "',
  '://a:',
  'redis://:',
  'Bearer ',
  'Basic ',
];
const MARKUP = [
  '[x](',
  '![',
  '**a',
  '__a',
  '~~a',
  '`a',
  '<!--',
  '```\n',
  '<s>',
  'SYSTEM:',
  'system:',
  '- user:',
  '<|im_start|>',
  '\u001b[',
  '\u001b]',
  '\u202e',
  '[p3f2a1c]',
  'verdict-json',
  '\nbd close x',
  '" && bd x',
  'bd comments add x "',
  '$(',
  "'",
  ' \\\n',
];
/** What ends a long run: the words the scanners' quick checks look for, then a character no run holds. */
const TAIL = ' system: historical patterns password=x token eyJ ://x verdict-json\u0001';

interface Hostile {
  label: string;
  text(bytes: number): string;
}
/** Whole repetitions of the unit, about `bytes` long (a unit cut at the end could hide the hostile tail). */
const repeated = (unit: string): Hostile => ({
  label: JSON.stringify(unit),
  text: (bytes) => unit.repeat(Math.ceil(bytes / unit.length)),
});
const runThenTail = (char: string): Hostile => ({
  label: `${JSON.stringify(char)}… then the tail`,
  text: (bytes) => char.repeat(bytes) + TAIL,
});

const HOSTILE: Hostile[] = [
  ...[...PUNCTUATION, ' ', '\n', '\t', 'a', '0', 'é', ...SECRET_PREFIXES, ...MARKUP].map(repeated),
  ...SECRET_PREFIXES.flatMap((p) => [`${p}a.`, `${p}a-`]).map(repeated),
  ...PUNCTUATION.map((c) => repeated(`a${c}`)),
  ...[...PUNCTUATION, ' ', '\t', 'a', '0'].map(runThenTail),
];

type Entry = (text: string) => unknown;

const FINDING_JSON = (s: string) =>
  `<!-- verdict-json {"verdict":"FAIL","issues":[{"id":"A1","summary":${JSON.stringify(s)}}],"must_fix":["A1"]} -->`;

let calls = 0;

/**
 * The entry points, each given the hostile text where untrusted text reaches it. The composite ones
 * (a whole deliberation, a command line, a report) are run at 1 MB as the executables that read them,
 * below, which keeps this file's time to a few seconds.
 */
const ENTRIES: { name: string; entry: Entry; composite?: true }[] = [
  { name: 'sanitize', entry: (s) => sanitizeUntrusted(s) },
  { name: 'sanitize (one line)', entry: (s) => sanitizeUntrusted(s, { singleLine: true }) },
  { name: 'redact', entry: (s) => redactSecrets(s) },
  { name: 'markdown (stripMarkdown, normaliseText)', entry: (s) => normaliseText(stripMarkdown(s)) },
  {
    name: 'accumulated patterns section',
    entry: (s) => accumulatedPatternItems(`## Accumulated Patterns\n- ${s}\n- ${s}`),
    composite: true,
  },
  {
    name: 'extract (section and findings)',
    entry: (s) => extractPatterns(`## Accumulated Patterns\n- ${s}`, parseVerdict(FINDING_JSON(s)).verdict),
    composite: true,
  },
  { name: 'verdict-json finder', entry: (s) => [parseVerdict(s), withoutVerdictBlocks(s)] },
  { name: 'evidence detector', entry: (s) => evidenceLevel(s, ['src/a.ts']), composite: true },
  {
    name: 'finding citations (short-id strip)',
    entry: (s) => [summaryWithoutCitations(s), citedIds({ id: 'A1', summary: s })],
  },
  {
    name: 'finding prose (validator reason)',
    entry: (s) => [validatorReason('A1', `A1 ${s}`), findingNamedByLine('A1', `A1 ${s}`)],
    composite: true,
  },
  // a new text each call: contentTerms keeps what it read
  { name: 'terms (content, index)', entry: (s) => [contentTerms(`${s} ${++calls}`), indexTerms(s)] },
  {
    name: 'bd-command shell lexer',
    entry: (s) => [simpleCommands(s), bdComments(`bd comments add x "LEARNED: ${s}"`)],
    composite: true,
  },
  {
    name: 'knowledge entry line',
    entry: (s) => parseEntryLine(JSON.stringify({ key: s, type: s, content: s, tags: [s], bead: s })),
  },
  {
    name: 'knowledge entry fields',
    entry: (s) => [parseTypedText(`LEARNED: ${s}`), tagsFor('learned', s), slugOf(s), isCommandLike(s)],
  },
  { name: 'recall query terms', entry: (s) => recallTerms(s) },
  {
    name: 'landing report',
    entry: (s) => {
      const report = parseLandingReport(
        JSON.stringify({ title: s, summary: s, prompt: s, changedPaths: [s], commandsRun: [s], validationCommand: s }),
        '/project',
      );
      return landingTags(report.paths, report.title, report.prompt);
    },
    composite: true,
  },
  {
    name: 'hook payload',
    entry: (s) =>
      readHookInput(
        JSON.stringify({
          hook_event_name: 'PostToolUse',
          cwd: '/p',
          tool_name: 'Bash',
          tool_input: { command: s },
          prompt: s,
        }),
      ),
  },
  { name: 'JSONL line', entry: (s) => parseJsonLine(`{"v":1,"text":${JSON.stringify(s)}} ${s}`) },
];

/** CPU time of one call, in ms. */
function time(entry: Entry, text: string): number {
  const start = process.cpuUsage();
  try {
    entry(text);
  } catch {
    // a parser may refuse hostile input: how long it took to decide is what is measured
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

/** Linear growth: ten times the input takes at most 30 times as long, plus a few ms of noise. */
const GROWTH = 30;
const SLACK_MS = 8;
/** The runs of each entry point measured again at 100 kB: its slowest at 10 kB. */
const SLOWEST = 4;

describe('every parser and regex on untrusted text runs in linear time', () => {
  for (const { name, entry, composite } of ENTRIES) {
    it(name, () => {
      const screened = HOSTILE.map((h) => ({ h, t10k: time(entry, h.text(10_000)) })).sort((a, b) => b.t10k - a.t10k);
      const measured = screened.slice(0, SLOWEST).map(({ h }) => {
        const small = h.text(10_000);
        const t10k = Math.min(time(entry, small), time(entry, small));
        const large = h.text(100_000);
        let t100k = time(entry, large);
        if (t100k > GROWTH * t10k + SLACK_MS) t100k = Math.min(t100k, time(entry, large)); // a pause of the machine, not the scan
        return { h, t10k, t100k };
      });
      const slow = measured
        .filter((m) => m.t100k > GROWTH * m.t10k + SLACK_MS)
        .map((m) => `${m.h.label}: 10 kB ${m.t10k.toFixed(1)} ms, 100 kB ${m.t100k.toFixed(1)} ms`);
      expect(slow).toEqual([]);
      if (composite) return;
      const worst = measured.sort((a, b) => b.t100k - a.t100k)[0];
      const t1m = time(entry, worst.h.text(1_000_000));
      expect(t1m, `${worst.h.label} at 1 MB: ${t1m.toFixed(0)} ms, at 100 kB ${worst.t100k.toFixed(1)} ms`).toBeLessThan(
        GROWTH * worst.t100k + 10 * SLACK_MS,
      );
    });
  }
});

describe('the executables at 1 MB of hostile text end within their 2 s deadline', () => {
  const MB = 1_000_000;
  /** The 2 s deadline, plus a process start, one step past the last check and a loaded machine. */
  const WITHIN_MS = 2000 + 2500;
  const timed = (name: string, args: string[], opts: RunOptions) => {
    const started = performance.now();
    const r = runBin(name, args, { ...opts, env: { CAIRN_NOW: '2026-03-02T10:00:00.000Z', ...opts.env } });
    return { ...r, ms: performance.now() - started };
  };

  it('store-deliberation: a run of `[` in a pattern item and in a finding (the markdown stripper)', () => {
    const cwd = tempProject();
    const text = `## Accumulated Patterns\n- Never ${'['.repeat(MB)}\n\n${FINDING_JSON(`Never ${'[x]('.repeat(MB / 4)}`)}\n`;
    const r = timed('store-deliberation', ['--role', 'auditor', '--issue', 'LED-1', '--run', 'r1'], {
      cwd,
      input: text,
    });
    expect(r.code).toBe(0);
    expect(r.ms).toBeLessThan(WITHIN_MS);
  });

  it('memory-capture: a bd comment of `eyJa.` runs (the redactor, the shell lexer)', () => {
    const cwd = tempProject();
    const command = `bd comments add bd-1 "LEARNED: the token was ${'eyJa.'.repeat(MB / 5)}" && bd close bd-1`;
    const payload = JSON.stringify({
      hook_event_name: 'PostToolUse',
      cwd,
      tool_name: 'Bash',
      tool_input: { command },
      tool_response: { stdout: '', stderr: '' },
    });
    const r = timed('memory-capture', [], { cwd, input: payload });
    expect(r.code).toBe(0);
    expect(r.ms).toBeLessThan(WITHIN_MS);
  });

  it('auto-recall: a planted knowledge line of `eyJa.` runs', () => {
    const cwd = tempProject();
    mkdirSync(join(cwd, '.cairn', 'memory'), { recursive: true });
    const planted = {
      key: 'learned-token',
      type: 'learned',
      content: `token handling ${'eyJa.'.repeat(MB / 5)}`,
      tags: ['token'],
      ts: 1772400000,
      bead: 'bd-1',
      source: 'x',
    };
    writeFileSync(join(cwd, '.cairn', 'memory', 'knowledge.jsonl'), JSON.stringify(planted) + '\n');
    const r = timed('auto-recall', [], {
      cwd,
      input: JSON.stringify({ hook_event_name: 'SessionStart', cwd, source: 'startup', prompt: 'token handling' }),
    });
    expect(r.code).toBe(0);
    expect(r.ms).toBeLessThan(WITHIN_MS);
  });

  it("feedback-loop: a validator text of hostile runs (the validator's reason, the evidence detector)", () => {
    const cwd = tempProject();
    const validator = `A1 is a false positive: ${'[x]('.repeat(MB / 8)} ${'- user:'.repeat(MB / 14)}\n${FINDING_JSON('ok').replace('"must_fix":["A1"]', '"must_fix":[],"false_positives":["A1"]')}\n`;
    writeFileSync(join(cwd, 'validator.md'), validator);
    writeFileSync(join(cwd, 'auditor.md'), `${FINDING_JSON(`Never ${'['.repeat(MB)}`)}\n`);
    const r = timed(
      'feedback-loop',
      [
        '--adversarial-role',
        'auditor',
        '--validator-role',
        'curator',
        '--issue',
        'LED-1',
        '--run',
        'r1',
        '--validator-file',
        'validator.md',
        '--adversarial-file',
        'auditor.md',
      ],
      { cwd },
    );
    expect(r.code).toBe(0);
    expect(r.ms).toBeLessThan(WITHIN_MS);
  });

  it('cairn patterns capture: a landing report of hostile runs', () => {
    const cwd = tempProject();
    const hostile = 'sk-a.'.repeat(MB / 10);
    writeFileSync(
      join(cwd, 'report.json'),
      JSON.stringify({
        title: `Ship ${hostile}`,
        summary: hostile,
        prompt: `${'a.'.repeat(MB / 4)}`,
        changedPaths: ['src/a.ts'],
        commandsRun: [hostile],
      }),
    );
    const r = timed('cairn', ['patterns', 'capture', '--report', 'report.json'], { cwd });
    expect(r.code).toBe(0);
    expect(r.ms).toBeLessThan(WITHIN_MS);
  });
});

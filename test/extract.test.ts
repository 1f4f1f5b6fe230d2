import { describe, it, expect } from 'vitest';
import { accumulatedPatternItems, classify, extractPatterns, MAX_PATTERN_CHARS, MIN_PATTERN_CHARS } from '../lib/patterns/extract.js';
import { parseVerdict } from '../lib/patterns/verdict.js';
import { deliberationFixtures, fixtureText } from './helpers.js';

// SPEC §3.3 steps 2–3: candidate patterns from a deliberation, and their category.

/** Section items, then findings, each as {text, category, source[, finding]}. */
function extract(text: string) {
  return flat(extractPatterns(text, parseVerdict(text).verdict));
}
function flat(x: ReturnType<typeof extractPatterns>) {
  return [...x.items, ...x.findings.map(({ text, category, source, finding }) => ({ text, category, source, finding }))];
}
const sectionOf = (text: string) => extract(text).filter((e) => e.source === 'section');

// The classes of the kept items, in order, and the short item each file ends with (fixtures/deliberations/README.md).
const SECTIONS = [
  ['led-101-r1-plan-auditor.md', '## heading', ['rule', 'rule', 'causal', 'causal', 'observation'], 'n/a'],
  ['led-101-r2-plan-auditor.md', 'bold line', ['rule', 'rule', 'causal', 'observation'], 'tbd'],
  ['led-102-r1-plan-auditor.md', 'plain line', ['rule', 'rule', 'causal', 'observation', 'rule'], 'tbd'],
  ['led-103-r1-plan-auditor.md', '### heading', ['rule', 'rule', 'causal', 'observation'], 'ok'],
  ['led-101-r1-review-judge.md', '### heading', ['rule', 'rule', 'causal', 'rule', 'observation'], 'ok'],
  ['led-102-r1-review-judge.md', 'plain line', ['rule', 'rule', 'causal', 'observation'], 'x'],
  ['led-103-r1-review-judge.md', 'bold line', ['rule', 'rule', 'causal', 'observation'], '-'],
  ['led-101-r1-qa-sentinel.md', '## heading', ['rule', 'rule', 'causal', 'observation'], 'none'],
  ['led-102-r1-qa-sentinel.md', 'bold line', ['rule', 'causal', 'rule', 'causal'], 'n/a'],
  ['led-103-r1-qa-sentinel.md', '### heading', ['rule', 'rule', 'causal', 'causal'], 'n/a'],
] as const;

describe('the Accumulated Patterns section of each adversarial fixture', () => {
  it.each(SECTIONS)('%s (%s): items found, classified, the short one dropped', (file, _form, classes, short) => {
    const text = fixtureText(file);
    const raw = accumulatedPatternItems(text);
    expect(raw).toHaveLength(classes.length + 1);
    expect(raw.at(-1)).toBe(short);
    const kept = sectionOf(text);
    expect(kept.map((e) => e.category)).toEqual(classes);
    expect(kept.map((e) => e.text)).not.toContain(short);
  });

  it('finds no section in the validators’ deliberations', () => {
    const validators = deliberationFixtures().filter((f) => ['curator', 'inspector', 'lens'].includes(f.role));
    expect(validators).toHaveLength(10);
    for (const f of validators) expect(accumulatedPatternItems(fixtureText(f.file)), f.file).toEqual([]);
  });

  it('joins an item’s continuation lines into one text', () => {
    const items = sectionOf(fixtureText('led-101-r1-plan-auditor.md')).map((e) => e.text);
    expect(items).toContain(
      'an unspecified output schema leads to consumers pinning to accidental keys, which turns every later rename into a breaking change',
    );
    expect(items).toContain(
      'A machine-readable mode that also prints banner or progress lines is unusable from scripts because the first non-JSON line aborts the parser',
    );
    const judge = sectionOf(fixtureText('led-103-r1-review-judge.md')).map((e) => e.text);
    expect(judge).toContain('every token-issuing endpoint needs a rate limit on the route or router');
  });

  it('stops at the next heading: bullets of later sections are not patterns', () => {
    // led-101-r2 has an Evidence section of bullets before its patterns and a Verdict section after.
    const items = accumulatedPatternItems(fixtureText('led-101-r2-plan-auditor.md'));
    expect(items[0]).toBe('Every new CLI flag must be documented in the man page before merge');
    expect(items.join('\n')).not.toMatch(/status\.ts:44|Close\. A1 blocks/);
  });

  it('reads the recurring texts exactly as the README lists them', () => {
    const texts = (file: string) => sectionOf(fixtureText(file)).map((e) => e.text);
    const manPage = 'Every new CLI flag must be documented in the man page before merge';
    for (const f of ['led-101-r1-plan-auditor.md', 'led-101-r2-plan-auditor.md', 'led-102-r1-plan-auditor.md'])
      expect(texts(f)).toContain(manPage);
    expect(texts('led-103-r1-plan-auditor.md')).toContain(
      'Plans must name the test file that proves each acceptance criterion before implementation begins',
    );
    expect(texts('led-102-r1-qa-sentinel.md')).toContain(
      'Never write raw session tokens or secrets to logs or CLI output, even at trace level',
    );
  });
});

describe('section headings', () => {
  const body = '\n- Retries need jitter to avoid a thundering herd\n\n## Next\n- Not a pattern at all, another section\n';
  it.each([
    ['## Accumulated Patterns', 'markdown heading'],
    ['### Accumulated Patterns', 'level 3'],
    ['#### Accumulated patterns (run r2)', 'level 4, lower case, trailing words'],
    ['**Accumulated Patterns**', 'bold line'],
    ['**Accumulated Patterns:**', 'bold line with colon'],
    ['__Accumulated Patterns__', 'underscore bold'],
    ['Accumulated Patterns:', 'plain line'],
  ])('%s (%s) opens the section', (heading) => {
    expect(accumulatedPatternItems(`# Review\n\nSome prose.\n\n${heading}${body}`)).toEqual([
      'Retries need jitter to avoid a thundering herd',
    ]);
  });

  it('ignores a mention of the words inside prose or a code fence', () => {
    const text = [
      'The Accumulated Patterns section follows the findings.',
      '- Not a pattern, a finding bullet',
      '```',
      'Accumulated Patterns:',
      '- inside a fence, not a pattern',
      '```',
    ].join('\n');
    expect(accumulatedPatternItems(text)).toEqual([]);
  });

  it('accepts dash, star, plus and numbered items, and ends at a verdict comment', () => {
    const text = [
      '## Accumulated Patterns',
      '- dash item text here',
      '* star item text here',
      '+ plus item text here',
      '1. numbered item text',
      '2) paren item text here',
      '<!-- jkz:verdict-json {"verdict":"PASS","issues":[],"must_fix":[],"false_positives":[]} -->',
      '- after the comment, not an item',
    ].join('\n');
    expect(accumulatedPatternItems(text)).toEqual([
      'dash item text here',
      'star item text here',
      'plus item text here',
      'numbered item text',
      'paren item text here',
    ]);
  });
});

describe('cleaning, length limits and dedupe', () => {
  const section = (...items: string[]) => `## Accumulated Patterns\n${items.map((i) => `- ${i}`).join('\n')}\n`;

  it('strips inline markdown and collapses whitespace', () => {
    const [e] = extract(section('**Never** log   `process.env` in [request handlers](https://example.com/x)'));
    expect(e.text).toBe('Never log process.env in request handlers');
  });

  it(`drops items under ${MIN_PATTERN_CHARS} characters and over ${MAX_PATTERN_CHARS}, measured after cleaning`, () => {
    const eleven = 'abcdefghijk';
    const twelve = 'abcdefghijkl';
    const max = 'word '.repeat(100).trim().padEnd(MAX_PATTERN_CHARS, 'x');
    expect(max).toHaveLength(500);
    const texts = extract(section(eleven, twelve, `**${eleven}**`, `RULE: ${eleven}`, max, max + 'y')).map((e) => e.text);
    expect(texts).toEqual([twelve, max]);
  });

  it('keeps the first of texts that normalise alike (case, markdown, end punctuation)', () => {
    const out = extract(section('Never log raw tokens.', '**never** log raw tokens', 'Never log raw tokens at all'));
    expect(out.map((e) => e.text)).toEqual(['Never log raw tokens.', 'Never log raw tokens at all']);
  });

  it('keeps a finding whose summary repeats a section item as a finding (it is linked to the item, SPEC §3.9.1)', () => {
    const MAN = 'Every new CLI flag must be documented in the man page before merge';
    const text = `## Accumulated Patterns\n- ${MAN}\n<!-- jkz:verdict-json ${JSON.stringify({ verdict: 'FAIL', issues: [{ id: 'A2', summary: MAN }], must_fix: ['A2'], false_positives: [] })} -->`;
    expect(extract(text)).toEqual([
      { text: MAN, category: 'rule', source: 'section' },
      { text: MAN, category: 'rule', source: 'finding', finding: 'A2' },
    ]);
    expect(
      extract(fixtureText('led-101-r1-plan-auditor.md'))
        .filter((e) => e.source === 'finding')
        .map((e) => e.finding),
    ).toEqual(['A1', 'A2', 'A3']);
  });

  it('keeps a finding too short to be a pattern when it cites one, and drops its citation from the text', () => {
    const text =
      '<!-- jkz:verdict-json {"verdict":"FAIL","issues":[{"id":"A1","summary":"See [p3f2a1c]"},{"id":"A2","summary":"Too short"},' +
      '{"id":"A3","summary":"The export endpoint is missing [p0a1b2c] from docs/openapi.yaml"}],"must_fix":["A1"],"false_positives":[]} -->';
    const { findings } = extractPatterns(text, parseVerdict(text).verdict);
    expect(findings.map((f) => [f.finding, f.text, f.storable])).toEqual([
      ['A1', 'See', false],
      ['A3', 'The export endpoint is missing from docs/openapi.yaml', true],
    ]);
  });
});

describe('classification', () => {
  it('an explicit prefix wins, and is removed from the text', () => {
    expect(classify('CAUSAL: string-built SQL leads to injection, so every query must use bound parameters')).toEqual({
      category: 'causal',
      text: 'string-built SQL leads to injection, so every query must use bound parameters',
    });
    expect(classify('OBSERVATION: reviewers never read the generated files')).toEqual({
      category: 'observation',
      text: 'reviewers never read the generated files',
    });
    expect(classify('RULE: a health command exits non-zero when a dependency is down')).toEqual({
      category: 'rule',
      text: 'a health command exits non-zero when a dependency is down',
    });
    expect(classify('rule: lower-case prefixes count too').category).toBe('rule');
  });

  it('the fixture’s CAUSAL: item beats the "must" in it', () => {
    const sql = sectionOf(fixtureText('led-102-r1-qa-sentinel.md')).find((e) => e.text.startsWith('string-built SQL'));
    expect(sql?.category).toBe('causal');
  });

  it.each(['must', 'never', 'always', 'do not', "don't", 'don’t', 'should', 'shouldn’t', 'required', 'avoid', 'forbidden'])(
    'an obligation (%s) makes a rule',
    (word) => {
      expect(classify(`Handlers ${word} touch the session table directly`).category).toBe('rule');
    },
  );

  it.each(['because', 'caused by', 'causes', 'leads to', 'results in', 'due to', 'therefore', 'so that', '->', '→'])(
    'a cause (%s) makes a causal pattern',
    (word) => {
      expect(classify(`Slow migrations ${word} deploy timeouts`).category).toBe('causal');
    },
  );

  it('an obligation outweighs a cause; anything else is an observation', () => {
    expect(classify('Always add jitter, because synchronized retries overload the API').category).toBe('rule');
    expect(classify('The deploy script reads status output as JSON').category).toBe('observation');
    expect(classify('The mustard banner marks the staging environment').category).toBe('observation');
  });
});

describe('finding summaries', () => {
  it('every verdict-json finding summary becomes a candidate with its finding id', () => {
    const out = extract(fixtureText('led-102-r1-qa-sentinel.md')).filter((e) => e.source === 'finding');
    expect(out).toEqual([
      {
        text: 'dueDate reaches the database without being parsed or validated in the handler',
        category: 'observation',
        source: 'finding',
        finding: 'S1',
      },
      {
        text: 'Backfill uses string-built SQL, which leads to injection without bound parameters',
        category: 'causal',
        source: 'finding',
        finding: 'S2',
      },
    ]);
  });

  it('a validator’s own findings are candidates too, though it has no section', () => {
    const out = extract(fixtureText('led-101-r1-review-inspector.md'));
    expect(out).toEqual([
      {
        text: 'Exit status ignores down dependencies in both modes; track as LED-104',
        category: 'observation',
        source: 'finding',
        finding: 'I1',
      },
    ]);
  });

  it('without a verdict only the section items are candidates', () => {
    const text = fixtureText('led-101-r1-plan-auditor.md');
    expect(extractPatterns(text, null).findings).toEqual([]);
    expect(extractPatterns(text, null).items).toHaveLength(5);
  });
});

describe('section and markdown edge cases', () => {
  it('finds a numbered "## 4. Accumulated Patterns" heading', () => {
    const text =
      '## 3. Findings\n- not a pattern at all here\n## 4. Accumulated Patterns\n- Every migration must be reversible in one step\n## 5. Verdict\n';
    expect(accumulatedPatternItems(text)).toEqual(['Every migration must be reversible in one step']);
  });

  it('keeps code spans as written while stripping emphasis around them', () => {
    const [p] = extractPatterns('## Accumulated Patterns\n- **Never** override `__init__` in a _dataclass_ subclass\n', null).items;
    expect(p.text).toBe('Never override __init__ in a dataclass subclass');
  });
});

describe('a line copied from the injected block', () => {
  it('loses its track record and short id, so it lands on the pattern it came from', () => {
    const text = [
      '## Accumulated Patterns',
      '- Every new CLI flag must be documented in the man page before merge (score:1.30)',
      '- Plans must name the test file for each criterion (2x validated, via:judge)',
      '- Migrations must be reversible in one step (-1 net, 2x ignored)',
      '- Keep the (optional) retry count small (it is 3)',
      '- [p3f2a1c] Webhook retries must back off with jitter (score:0.42)',
    ].join('\n');
    expect(sectionOf(text).map((e) => e.text)).toEqual([
      'Every new CLI flag must be documented in the man page before merge',
      'Plans must name the test file for each criterion',
      'Migrations must be reversible in one step',
      'Keep the (optional) retry count small (it is 3)',
      'Webhook retries must back off with jitter',
    ]);
  });
});

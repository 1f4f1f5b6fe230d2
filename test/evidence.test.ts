import { describe, it, expect } from 'vitest';
import { evidenceLevel } from '../lib/patterns/evidence.js';

const fenced = (body: string, info = '') => `Output:\n\`\`\`${info}\n${body}\n\`\`\`\n`;

describe('evidenceLevel: L1, execution output', () => {
  it('sees a shell prompt line in a fenced block', () => {
    expect(evidenceLevel(fenced('$ npm test\n> cairn@0.1.0 test', 'console'))).toBe('L1');
    expect(evidenceLevel('~~~\n  $ git diff --stat\n~~~')).toBe('L1');
  });

  it.each([
    '12 passed',
    '3 failed, 9 passed in 0.41s',
    'Tests: 14 passed, 14 total',
    ' Test Files  2 passed (2)',
    '  14 passing (32ms)',
    'ok 1 - adds numbers',
    'not ok 2 - rejects negative totals',
    'PASS src/x.test.ts',
    'FAIL  test/invoices.test.js (5 ms)',
    'exit code 0',
    'Process exited with code 1',
    'Exit status: 2',
  ])('sees the runner output %j in a fenced block', (line) => {
    expect(evidenceLevel(fenced(line))).toBe('L1');
  });

  it('sees a "Pre-validated checks" heading followed by content, even unfenced', () => {
    expect(evidenceLevel('## Pre-validated checks\n\n- lint: ok\n- tests: 14 passed\n\n## Review\nLooks fine.')).toBe('L1');
    expect(evidenceLevel('### Pre-validated checks\n```\nnpm run build\n```')).toBe('L1');
  });

  it('sees a bold "Pre-validated checks" line with content after it or on it', () => {
    expect(evidenceLevel('**Pre-validated checks:**\ntypecheck clean')).toBe('L1');
    expect(evidenceLevel('**Pre-validated checks**: build ok, 14 tests pass')).toBe('L1');
    expect(evidenceLevel('__Prevalidated checks__\nlint ok')).toBe('L1');
  });

  it('does not count a "Pre-validated checks" heading with nothing under it', () => {
    expect(evidenceLevel('## Pre-validated checks\n\n## Findings\nNone.')).toBe('L3');
    expect(evidenceLevel('**Pre-validated checks**\n')).toBe('L3');
  });

  it('does not count runner output outside a fenced block', () => {
    expect(evidenceLevel('All good: 12 passed, exit code 0.\nPASS src/x.test.ts\n$ npm test')).toBe('L3');
  });

  it('wins over L2', () => {
    const text = 'Bug at `src/api/invoices.ts:42`: `total = body.total`.\n' + fenced('$ npm test\n1 failed');
    expect(evidenceLevel(text, ['docs/other.md'])).toBe('L1');
  });
});

describe('evidenceLevel: L2, a citation with a quoted fragment', () => {
  it('accepts inline code', () => {
    expect(evidenceLevel('src/api/invoices.ts:42 trusts the client: `const total = body.total;`')).toBe('L2');
  });

  it('accepts a fenced block', () => {
    expect(evidenceLevel('In lib/score.ts:88-91 the decay is applied twice:\n```ts\nscore *= decay;\nscore *= decay;\n```')).toBe('L2');
  });

  it('accepts a double-quoted fragment of at least 3 characters', () => {
    expect(evidenceLevel('See handler.py:12:5, which reads "if user.is_admin or True".')).toBe('L2');
    expect(evidenceLevel('See handler.py:12 where it says “return None”.')).toBe('L2');
    expect(evidenceLevel('See handler.py:12 where "ok" is returned.')).toBe('L3');
  });

  it('needs a quote besides the citation itself', () => {
    expect(evidenceLevel('The bug is at `src/api/invoices.ts:42`.')).toBe('L3');
    expect(evidenceLevel('The bug is at "src/api/invoices.ts:42".')).toBe('L3');
  });

  it('needs the cited file to be among the changed files when they are known', () => {
    const text = 'api/invoices.ts:12 drops the tax: `return subtotal;`';
    expect(evidenceLevel(text, ['src/api/invoices.ts'])).toBe('L2');
    expect(evidenceLevel(text, ['./src/api/invoices.ts', 'README.md'])).toBe('L2');
    expect(evidenceLevel(text, ['src/api/payments.ts'])).toBe('L3');
    expect(evidenceLevel(text, ['src/xapi/invoices.ts'])).toBe('L3'); // suffix must start at a `/`
    expect(evidenceLevel(text, [])).toBe('L2'); // an empty list means unknown
  });

  it('normalises ./ and backslashes in cited paths', () => {
    expect(evidenceLevel('.\\src\\api\\invoices.ts:12 has `return subtotal;`', ['src/api/invoices.ts'])).toBe('L2');
    expect(evidenceLevel('./src/api/invoices.ts:12 has `return subtotal;`', ['src/api/invoices.ts'])).toBe('L2');
  });

  it('ignores the verdict-json block, whose locations and strings are a summary', () => {
    const text = [
      'Totals look wrong.',
      '<!-- jkz:verdict-json',
      '{"verdict":"FAIL","issues":[{"id":"A1","summary":"client total trusted","location":"src/api/invoices.ts:42"}],"must_fix":["A1"]}',
      '-->',
      '```verdict-json',
      '{"verdict":"FAIL","issues":[{"id":"A1","location":"src/api/invoices.ts:42","summary":"3 failed"}]}',
      '```',
    ].join('\n');
    expect(evidenceLevel(text)).toBe('L3');
  });
});

describe('evidenceLevel: L3, narrative', () => {
  it('does not accept a claim of running tests without output', () => {
    expect(evidenceLevel('I ran the tests and they all pass. The build succeeded with exit code zero.')).toBe('L3');
  });

  it('does not accept a bare file name without a line', () => {
    expect(evidenceLevel('The problem is in invoices.ts: `const total = body.total;`')).toBe('L3');
  });

  it('does not take a URL with a port or an address for a citation', () => {
    expect(evidenceLevel('Start it and open http://localhost:8080 then check "the total is wrong".')).toBe('L3');
    expect(evidenceLevel('Call https://api.example.com:443/v1 and see "the total is wrong".')).toBe('L3');
    expect(evidenceLevel('Bind 127.0.0.1:3000 and check "the total is wrong".')).toBe('L3');
  });

  it('does not accept a citation without any quote, or a file name without an extension', () => {
    expect(evidenceLevel('See src/api/invoices.ts:42 for the bug.')).toBe('L3');
    expect(evidenceLevel('At 10:30 the "deploy went wrong" in Makefile:12.')).toBe('L3');
  });

  it('stays L3 on empty, huge and binary input without throwing', () => {
    expect(evidenceLevel('')).toBe('L3');
    expect(evidenceLevel(undefined as unknown as string)).toBe('L3');

    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) % 256;
    const bytes = Buffer.from(Array.from({ length: 1_000_000 }, random));
    expect(['L1', 'L2', 'L3']).toContain(evidenceLevel(bytes.toString('latin1')));
    expect(['L1', 'L2', 'L3']).toContain(evidenceLevel(bytes.toString('utf8')));

    const hostile = [
      '"'.repeat(5_000_000),
      '“'.repeat(2_000_000),
      '`'.repeat(5_000_000),
      ' '.repeat(5_000_000) + 'x',
      '9'.repeat(5_000_000),
      'a'.repeat(5_000_000) + ':1',
      'a:1'.repeat(1_500_000),
      '<!--'.repeat(1_000_000),
      '```\n'.repeat(1_000_000),
      '## Pre-validated checks\n\n'.repeat(200_000),
    ];
    for (const text of hostile) expect(evidenceLevel(text)).toMatch(/^L[123]$/);
    expect(evidenceLevel('a'.repeat(5_000_000) + ':1 `x`')).toBe('L3'); // far too long to be a path
  });
});

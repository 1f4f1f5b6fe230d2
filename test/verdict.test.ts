import { describe, it, expect } from 'vitest';
import { parseVerdict, findingById } from '../lib/patterns/verdict.js';

const comment = (json: string, ns = 'jkz') => `<!-- ${ns}:verdict-json\n${json}\n-->`;

describe('parseVerdict: block forms', () => {
  it('reads a jkz comment block spanning lines, with every field', () => {
    const text = `The handler trusts the client total.
<!-- jkz:verdict-json
{
  "verdict": "FAIL",
  "issues": [{ "id": "J1", "severity": "HIGH", "summary": "total not recomputed",
    "location": "src/api/invoices.ts:42", "root_cause": "implementation_bug", "fix_hint": "recompute server-side" }],
  "must_fix": ["J1"],
  "false_positives": ["A2"]
}
-->`;
    const { verdict, problems } = parseVerdict(text);
    expect(problems).toEqual([]);
    expect(verdict).toEqual({
      verdict: 'FAIL',
      effective: 'FAIL',
      issues: [
        {
          id: 'J1',
          severity: 'HIGH',
          summary: 'total not recomputed',
          location: 'src/api/invoices.ts:42',
          root_cause: 'implementation_bug',
          fix_hint: 'recompute server-side',
        },
      ],
      must_fix: ['J1'],
      false_positives: ['A2'],
    });
  });

  it.each(['ci', 'my-team_2', 'X9'])('accepts the namespace %s', (ns) => {
    expect(parseVerdict(comment('{"verdict":"PASS"}', ns)).verdict?.verdict).toBe('PASS');
  });

  it('accepts a one-line comment with no space after <!--', () => {
    expect(parseVerdict('ok <!--ci:verdict-json {"verdict":"PASS"}--> done').verdict?.verdict).toBe('PASS');
  });

  it('reads fenced blocks with ``` and ~~~', () => {
    const backticks = 'Result:\n```verdict-json\n{"verdict":"FAIL","must_fix":["S1"]}\n```\n';
    const tildes = '~~~verdict-json\n{"verdict":"PASS"}\n~~~';
    expect(parseVerdict(backticks).verdict?.must_fix).toEqual(['S1']);
    expect(parseVerdict(tildes).verdict?.verdict).toBe('PASS');
  });

  it('closes a fence only with the same character, at least as long', () => {
    const text = '````verdict-json\n{"verdict":"FAIL","must_fix":["I1"],\n~~~~\n```\n"issues":[]}\n````';
    // Neither `~~~~` nor the shorter ``` closes the block, so they are part of its (invalid) JSON.
    const { verdict, problems } = parseVerdict(text);
    expect(verdict).toBeNull();
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/line 1 is not valid JSON/);
  });

  it('ignores prose that merely mentions verdict-json', () => {
    expect(parseVerdict('Please end with a verdict-json block, see ```verdict-json docs.')).toEqual({
      verdict: null,
      problems: [],
    });
    expect(parseVerdict('')).toEqual({ verdict: null, problems: [] });
  });
});

describe('parseVerdict: which block wins', () => {
  it('takes the last valid block, across forms', () => {
    const text = [
      comment('{"verdict":"FAIL","must_fix":["J1"]}'),
      'After re-checking:',
      '```verdict-json',
      '{"verdict":"PASS"}',
      '```',
    ].join('\n');
    const { verdict, problems } = parseVerdict(text);
    expect(problems).toEqual([]);
    expect(verdict?.verdict).toBe('PASS');
  });

  it('falls back to the previous valid block when the last one is invalid, and reports it', () => {
    const text = [
      comment('{"verdict":"FAIL","must_fix":["J1"]}'), // lines 1-3
      comment('{"verdict":"PASS", }'), // lines 4-6: trailing comma, not strict JSON
    ].join('\n');
    const { verdict, problems } = parseVerdict(text);
    expect(verdict?.verdict).toBe('FAIL');
    expect(verdict?.must_fix).toEqual(['J1']);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^verdict-json block at line 4 is not valid JSON/);
  });

  it('rejects the template placeholder "PASS|FAIL"', () => {
    const template = comment(
      '{"verdict":"PASS|FAIL","issues":[{"id":"J1","severity":"CRITICAL|HIGH"}],"must_fix":["J1"],"false_positives":[]}',
    );
    const { verdict, problems } = parseVerdict(template);
    expect(verdict).toBeNull();
    expect(problems).toEqual(['verdict-json block at line 1 has verdict "PASS|FAIL", expected PASS or FAIL.']);
  });

  it('reports blocks that are not objects or have no verdict', () => {
    const text = [comment('["PASS"]'), comment('{"issues":[]}'), comment('{"verdict":true}')].join('\n');
    const { verdict, problems } = parseVerdict(text);
    expect(verdict).toBeNull();
    expect(problems).toEqual([
      'verdict-json block at line 1 is not a JSON object.',
      'verdict-json block at line 4 has no "verdict" field.',
      'verdict-json block at line 7 has verdict of type boolean, expected PASS or FAIL.',
    ]);
  });

  it('reports an unclosed comment and keeps the earlier valid block', () => {
    const text = `${comment('{"verdict":"PASS"}')}\n<!-- jkz:verdict-json {"verdict":"FAIL","must_fix":["J1"]}`;
    const { verdict, problems } = parseVerdict(text);
    expect(verdict?.verdict).toBe('PASS');
    expect(problems).toEqual(['verdict-json block at line 4 is never closed.']);
  });

  it('reports an unclosed fence and keeps the earlier valid block', () => {
    const text = '~~~verdict-json\n{"verdict":"FAIL","must_fix":["J1"]}\n~~~\n```verdict-json\n{"verdict":"PASS"}\n';
    const { verdict, problems } = parseVerdict(text);
    expect(verdict?.must_fix).toEqual(['J1']);
    expect(problems).toEqual(['verdict-json block at line 4 is never closed.']);
  });
});

describe('parseVerdict: normalisation', () => {
  it('upper-cases the verdict', () => {
    expect(parseVerdict(comment('{"verdict":" pass "}')).verdict?.verdict).toBe('PASS');
  });

  it('counts FAIL with an empty or missing must_fix as PASS', () => {
    expect(parseVerdict(comment('{"verdict":"fail","must_fix":[]}')).verdict).toMatchObject({
      verdict: 'FAIL',
      effective: 'PASS',
    });
    expect(parseVerdict(comment('{"verdict":"FAIL"}')).verdict?.effective).toBe('PASS');
    expect(parseVerdict(comment('{"verdict":"FAIL","must_fix":[" ", null]}')).verdict?.effective).toBe('PASS');
    expect(parseVerdict(comment('{"verdict":"FAIL","must_fix":["J1"]}')).verdict?.effective).toBe('FAIL');
  });

  it('normalises id lists: numbers to strings, trimmed, empties and duplicates dropped', () => {
    const json = '{"verdict":"FAIL","must_fix":[" J1 ", 7, "", "J1", null, {"id":"J2"}, "J3"],"false_positives":"A1"}';
    const verdict = parseVerdict(comment(json)).verdict;
    expect(verdict?.must_fix).toEqual(['J1', '7', 'J3']);
    expect(verdict?.false_positives).toEqual([]);
  });

  it('skips issues that are not objects or lack an id, and drops non-string fields', () => {
    const json = JSON.stringify({
      verdict: 'FAIL',
      issues: ['J0', null, [], { summary: 'no id' }, { id: '  ' }, { id: 3, severity: 2, summary: 'ok', location: null }],
      must_fix: ['3'],
    });
    expect(parseVerdict(comment(json)).verdict?.issues).toEqual([{ id: '3', summary: 'ok' }]);
  });

  it('treats a missing or non-array issues field as empty', () => {
    expect(parseVerdict(comment('{"verdict":"PASS","issues":{"id":"J1"}}')).verdict?.issues).toEqual([]);
  });
});

describe('parseVerdict: hostile input', () => {
  it('handles 5 MB of unclosed comment openers with one problem', () => {
    const text = '<!-- x:verdict-json {'.repeat(250_000);
    const { verdict, problems } = parseVerdict(text);
    expect(verdict).toBeNull();
    expect(problems).toEqual(['verdict-json block at line 1 is never closed.']);
  });

  it('handles 5 MB of unclosed fence openers', () => {
    const { verdict, problems } = parseVerdict('```verdict-json\n{'.repeat(300_000));
    expect(verdict).toBeNull();
    expect(problems).toHaveLength(1);
  });

  it('handles markers with no opener and long lines of fence characters', () => {
    expect(parseVerdict('verdict-json '.repeat(400_000)).verdict).toBeNull();
    expect(parseVerdict('`'.repeat(5_000_000) + 'verdict-json').verdict).toBeNull();
  });

  it('caps the problem list on a flood of invalid blocks', () => {
    const { verdict, problems } = parseVerdict('<!-- a:verdict-json {} -->\n'.repeat(100_000));
    expect(verdict).toBeNull();
    expect(problems).toHaveLength(11);
    expect(problems[10]).toBe('99990 more invalid verdict-json blocks were ignored.');
  });

  it('reports absurdly nested JSON instead of throwing', () => {
    const deep = '['.repeat(1_000_000) + ']'.repeat(1_000_000);
    const { verdict, problems } = parseVerdict(comment(deep));
    expect(verdict).toBeNull();
    expect(problems).toHaveLength(1);
  });

  it('returns null on random binary garbage, with or without markers', () => {
    let seed = 42;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) % 256;
    const bytes = Buffer.from(Array.from({ length: 1_000_000 }, random));
    for (const text of [bytes.toString('latin1'), bytes.toString('utf8')]) {
      expect(parseVerdict(text).verdict).toBeNull();
      const salted = text.slice(0, 500_000) + '<!-- x:verdict-json ' + text.slice(500_000) + ' -->';
      const result = parseVerdict(salted);
      expect(result.verdict).toBeNull();
      expect(result.problems.length).toBeGreaterThan(0);
    }
  });

  it('does not throw on a non-string argument', () => {
    expect(parseVerdict(undefined as unknown as string)).toEqual({ verdict: null, problems: [] });
  });
});

describe('findingById', () => {
  const verdict = parseVerdict(
    comment('{"verdict":"FAIL","issues":[{"id":"J1","summary":"first"},{"id":"s2","summary":"second"}],"must_fix":["J1"]}'),
  ).verdict;

  it('matches ids case-insensitively after trimming', () => {
    expect(findingById(verdict, ' j1 ')?.summary).toBe('first');
    expect(findingById(verdict, 'S2')?.summary).toBe('second');
  });

  it('returns undefined for unknown ids, empty ids and a null verdict', () => {
    expect(findingById(verdict, 'J3')).toBeUndefined();
    expect(findingById(verdict, '  ')).toBeUndefined();
    expect(findingById(null, 'J1')).toBeUndefined();
  });
});

import { describe, it, expect } from 'vitest';
import { conflicts, nearMiss, ruleKey, sameRule, sharedIdentifiers } from '../lib/patterns/identity.js';
import { identifiers } from '../lib/core/text.js';
import { storeDeliberation } from '../lib/patterns/deliberation.js';
import { patternId } from '../lib/core/ids.js';
import { listPatterns } from '../lib/patterns/queries.js';
import { patternDb } from '../lib/events/log.js';
import { openTestStore, tempProject } from './helpers.js';
import type { Store } from '../lib/store/store.js';

// Which texts are one pattern and which findings reach which rule (SPEC §3.10.4, §3.10.5), on the
// wordings that defeated word overlap: rewordings of one rule, rules one identifier apart.

const LEASE = 'Each scheduler job must hold a lease in the jobs table, so two instances never schedule the same work';
const LEASE_REWORDED = 'Every scheduler job should hold a lease in the jobs table, so that two instances never run the same work';
const LAN = 'The edge-lan gateway must terminate TLS itself before traffic reaches the internal network';
const LTE = 'The edge-lte gateway must terminate TLS itself before traffic reaches the internal network';

describe('one rule, or two', () => {
  it('two wordings of one rule are one pattern: function words and one changed verb aside', () => {
    expect(sameRule(ruleKey(LEASE), ruleKey(LEASE_REWORDED))).toBe(true);
  });

  it('two rules one identifier apart are two, however many words they share', () => {
    expect(sameRule(ruleKey(LAN), ruleKey(LTE))).toBe(false);
    expect(
      sameRule(
        ruleKey('helper3 catches exceptions and drops them without logging them anywhere'),
        ruleKey('helper18 catches exceptions and drops them without logging them anywhere'),
      ),
    ).toBe(false);
    expect(
      sameRule(
        ruleKey('Pin the client to v2.3 of the billing SDK until the retry bug is fixed'),
        ruleKey('Pin the client to v2.4 of the billing SDK until the retry bug is fixed'),
      ),
    ).toBe(false);
  });

  it('a text of function words only is no other text’s pattern', () => {
    expect(sameRule(ruleKey('it must be so'), ruleKey('so it must be'))).toBe(false);
  });

  it('as stored: the reworded rule lands on the pattern, the near-miss twin is a pattern of its own', () => {
    const s = openTestStore(tempProject());
    const store = (items: string[], run: string) =>
      storeDeliberation(s, {
        text: `## Accumulated Patterns\n${items.map((t) => `- ${t}`).join('\n')}\n`,
        role: 'auditor',
        issue: 'OPS-1',
        run,
        phase: null,
        iteration: null,
        labels: [],
        files: [],
      });
    store([LEASE, LAN], 'r1');
    const second = store([LEASE_REWORDED, LTE], 'r2');
    expect(second.patterns.map((p) => [p.text, p.status])).toEqual([
      [LEASE_REWORDED, 'merged'],
      [LTE, 'new'],
    ]);
    expect(
      listPatterns(patternDb(s), s.project)
        .map((p) => p.text)
        .sort(),
    ).toEqual([LAN, LTE, LEASE].sort());
  });
});

describe('identifiers of one family', () => {
  it('are near misses when one or two characters apart and neither a part of the other', () => {
    for (const [a, b] of [
      ['helper3', 'helper18'],
      ['edge-lan', 'edge-lte'],
      ['v2.3', 'v2.4'],
      ['billing/', 'billings/'],
      ['src/a.ts', 'src/b.ts'],
    ])
      expect(nearMiss(a, b), `${a} ${b}`).toBe(true);
    for (const [a, b] of [
      ['ie11', '11'],
      ['src/api', 'src/api/refunds.ts'],
      ['helper3', 'helper3'],
      ['cache', 'scheduler'],
    ])
      expect(nearMiss(a, b), `${a} ${b}`).toBe(false);
  });

  it('a finding naming one conflicts with a rule naming the other, unless it names that one too', () => {
    expect(conflicts(identifiers('helper18 catches exceptions'), identifiers('helper3 catches exceptions'))).toBe(true);
    expect(conflicts(identifiers('helper18 and helper3 both catch exceptions'), identifiers('helper3 catches exceptions'))).toBe(false);
    expect(
      conflicts(identifiers('src/api/export.ts:42 adds an endpoint'), identifiers('Every endpoint is documented in docs/openapi.yaml')),
    ).toBe(false);
  });

  it('a finding names a rule by its identifier, by a path:LINE within a path it names, or by an acronym of its capitalised words', () => {
    const named = (finding: string, rule: string) => sharedIdentifiers(finding, identifiers(finding), rule, identifiers(rule));
    expect(
      named('The export endpoint is missing from docs/openapi.yaml:12', 'Every endpoint must be documented in docs/openapi.yaml'),
    ).toBe(1);
    expect(
      named(
        'The reports dashboard uses CSS grid and optional chaining, which IE11 cannot run',
        'Dashboards must keep working in Internet Explorer 11',
      ),
    ).toBe(1);
    expect(named('The CI job has no timeout', 'Continuous integration jobs need a timeout')).toBe(0); // two lower-case letters spell too much
    expect(named('retries 3 times', 'keep at most 3 files open')).toBe(0); // a bare number names nothing
  });
});

describe('links that reach the rule (SPEC §3.10.5)', () => {
  function storeRun(s: Store, run: string, items: string[], findings: { id: string; summary: string; location?: string }[]) {
    const verdict = { verdict: 'FAIL', issues: findings, must_fix: findings.map((f) => f.id), false_positives: [] };
    const text = `## Accumulated Patterns\n${items.map((t) => `- ${t}`).join('\n')}\n\n<!-- jkz:verdict-json ${JSON.stringify(verdict)} -->\n`;
    return storeDeliberation(s, {
      text,
      role: 'auditor',
      issue: 'OPS-2',
      run,
      phase: null,
      iteration: null,
      labels: [],
      files: [],
    });
  }

  it('prefers the rule the adversary echoed about helper18 over an older pattern of the same words about helper3', () => {
    const s = openTestStore(tempProject());
    const OLD = 'helper3 catches exceptions and drops them without logging';
    storeRun(s, 'r1', [], [{ id: 'A1', summary: OLD }]); // a finding that became its own pattern
    const RULE = 'helper18 runs the payment retries, so a failure there must raise an alert'; // shares only its identifier with the finding
    const second = storeRun(s, 'r2', [RULE], [{ id: 'A1', summary: 'helper18 catches exceptions and drops them without logging' }]);
    expect(second.links).toEqual([
      expect.objectContaining({ finding: 'A1', patterns: [patternId(s.project, 'auditor', RULE)], match: 'text' }),
    ]);
  });

  it('never links a finding about the edge-lte gateway to the rule about edge-lan, and a rule of its own is stored instead', () => {
    const s = openTestStore(tempProject());
    storeRun(s, 'r1', [LAN], []);
    const second = storeRun(s, 'r2', [], [{ id: 'A1', summary: 'The edge-lte gateway forwards plain HTTP to the internal network' }]);
    expect(second.links).toEqual([expect.objectContaining({ finding: 'A1', match: 'self' })]);
  });

  it('a finding’s location path links it to no rule that only names another file of the same folder and type', () => {
    const s = openTestStore(tempProject());
    const RULE = 'Every breaking API change must bump the major version and be announced in docs/changelog.md';
    const stored = storeRun(
      s,
      'r1',
      [RULE],
      [
        {
          id: 'A1',
          summary: 'The plan adds GET /v2/alerts without a load test',
          location: 'docs/plans/current.md:109',
        },
      ],
    );
    expect(stored.links).toEqual([expect.objectContaining({ finding: 'A1', match: 'self' })]);
  });

  it('bridges a vocabulary gap by an acronym: IE11 in the finding reaches the rule about Internet Explorer 11 it was applied with', () => {
    const s = openTestStore(tempProject());
    const RULE = 'Customer dashboards must keep working in Internet Explorer 11';
    const other = 'Every chart needs an accessible text alternative';
    const stored = storeRun(
      s,
      'r1',
      [RULE, other],
      [
        {
          id: 'A1',
          summary: 'The billing dashboard now uses CSS grid and optional chaining, which IE11 cannot run',
          location: 'web/billing/Dashboard.tsx:40',
        },
      ],
    );
    expect(stored.links).toEqual([expect.objectContaining({ finding: 'A1', patterns: [patternId(s.project, 'auditor', RULE)] })]);
  });
});

import { describe, it, expect } from 'vitest';
import { fixtureText } from './helpers.js';
import { validatorReason } from '../lib/patterns/finding-prose.js';

// What a validator's prose says about one finding: the reason feedback-loop reads a dismissal with
// (lib/patterns/finding-prose.ts).

describe('validatorReason', () => {
  it('the reason is the prose naming the id: its list item, not the verdict block, not a line about A10', () => {
    const text = [
      '# check',
      '- A10: the man page point is fair; must fix.',
      '- **A1** — false positive: there is no GraphQL schema in this service.',
      '<!-- jkz:verdict-json {"verdict":"FAIL","issues":[],"must_fix":["A10"],"false_positives":["A1"],',
      '"note":"A1 mentions the man page"} -->',
      'A1 again: REST only.',
    ].join('\n');
    expect(validatorReason('A1', text)).toBe('false positive: there is no GraphQL schema in this service. again: REST only.');
    expect(validatorReason('A7', text)).toBe('');
  });

  it("the reason of a real validator's text: the paragraph or the heading's section about the id, and only the sentences about it where others are named", () => {
    const curator = fixtureText('led-101-r1-plan-curator.md');
    expect(validatorReason('A2', curator, ['A1', 'A2', 'A3'])).toMatch(
      /^man page: false positive\. ledgerly ships no man page\. There is no man\/ directory, .* asks for a new artifact, not a fix\. is dismissed\.$/,
    );
    const inspector = fixtureText('led-103-r1-review-inspector.md');
    const j2 = validatorReason('J2', inspector, ['J1', 'J2']);
    expect(j2).toContain('false positive Every route on the auth router, refresh included, sits behind the limiter');
    expect(j2).not.toMatch(/second refresh|401/); // J1's section
  });
});

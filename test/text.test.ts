import { describe, expect, it } from 'vitest';
import { contentTerms, identifiers, indexTerms, isStopWord, stem, words } from '../lib/core/text.js';
import { seededRandom } from './helpers.js';

// The terms links and the term index are built from (SPEC §3.9.1): a change here moves every link
// and every near-duplicate, so what each kind of chunk yields is pinned down.
describe('contentTerms', () => {
  const terms = (text: string) => Object.fromEntries(contentTerms(text));

  it('flags the words of code as identifiers: a call, camelCase, snake_case, a path, a flag, a constant, backticks', () => {
    expect(terms('exportCsv() reads each customer row')).toEqual({
      export: true,
      csv: true,
      read: false,
      custom: false,
      row: false,
    });
    expect(terms('call retry() before merging')).toMatchObject({ retry: true, cal: false });
    expect(terms('missing_tenant_scope on GET /invoices/:id')).toMatchObject({ miss: true, tenant: true, scop: true });
    expect(terms('see src/api/refunds.ts:30')).toMatchObject({
      src: true,
      api: true,
      refund: true,
      ts: true,
      see: false,
    });
    expect(terms('TAX_API_URL and --dry-run')).toMatchObject({ tax: true, api: true, url: true, dry: true, run: true });
    expect(terms('document it in `openapi yaml`')).toMatchObject({ document: false, openapy: true, yaml: true });
  });

  it('a capitalised word is the same word in lower case; one in capitals is an identifier; camelCase splits', () => {
    expect(terms('The Retries Before Merging')).toEqual({ retry: false, merg: false });
    expect(terms('HTTPs Rollbacks')).toEqual({ http: false, rollback: false });
    expect(terms('SQL query')).toEqual({ sql: true, query: false });
    expect(terms('Check X86 and ÉTÉ')).toEqual({ check: false, x86: true, été: true });
    expect(terms('iPhone McDonald')).toEqual({ phon: true, mc: true, donald: true });
  });

  it('a word followed by anything but a call is prose, and stop-words and one-letter words are dropped', () => {
    expect(terms('retry (twice) before the merge')).toEqual({ retry: false, twic: false, merg: false });
    expect(terms('a b of the')).toEqual({});
  });
});

describe('indexTerms', () => {
  it('indexes every word but the stop-words stemmed, and the content terms, and counts them', () => {
    const { terms, length } = indexTerms('exportCsv() reads the rows, the rows');
    expect(new Set(terms)).toEqual(new Set(['exportcsv', 'read', 'row', 'export', 'csv']));
    expect(length).toBe(5);
  });

  it('is, for any text, the stems of its words but the stop-words and its content terms (ASCII prose takes a shorter way)', () => {
    const rnd = seededRandom(11);
    const pieces = [
      'the',
      'a',
      'b',
      'Retries',
      'SQL',
      'exportCsv()',
      'missing_tenant_scope',
      'src/api/refunds.ts:30',
      '`openapi yaml`',
      '--dry-run',
      'TAX_API_URL',
      'iPhone',
      'x86',
      'ÉTÉ',
      'café',
      'ΟΔΟΣ',
      'ﬁle',
      'naïve',
      'GET /invoices/:id',
      'before',
      '(twice)',
      'merged.',
      'HTTPs',
    ];
    for (let i = 0; i < 2000; i++) {
      const text = Array.from({ length: 1 + Math.floor(rnd() * 8) }, () => pieces[Math.floor(rnd() * pieces.length)]).join(
        rnd() < 0.2 ? '' : ' ',
      );
      const expected = new Set([...new Set(words(text))].filter((w) => !isStopWord(w)).map(stem));
      for (const t of contentTerms(text).keys()) expected.add(t);
      const { terms, length } = indexTerms(text);
      expect(new Set(terms), text).toEqual(expected);
      expect(length).toBe(expected.size);
    }
  });
});

describe('identifiers', () => {
  it('names paths, files, versions, numbers, code names with digits, hyphenated and dotted names, flags, camelCase and backticks (SPEC §3.10.4)', () => {
    expect([
      ...identifiers('The edge-lan gateway in billing/ reads docs/openapi.yaml:12 since v2.3 on helper18 (retry 3 times), see `Sync Job`'),
    ]).toEqual(['edge-lan', 'billing/', 'docs/openapi.yaml:12', 'v2.3', 'helper18', '3', 'sync job']);
    expect([...identifiers('Pass --dry-run to exportCsv() and TAX_API_URL')]).toEqual(['--dry-run', 'exportcsv', 'tax_api_url']);
  });

  it('takes capitals for emphasis, not for a name: NEVER and never are the same word', () => {
    expect([...identifiers('NEVER merge without a Review; IMPORTANT')]).toEqual([]);
  });
});

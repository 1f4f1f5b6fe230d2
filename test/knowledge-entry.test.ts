import { describe, it, expect } from 'vitest';
import { keyOf, makeEntry, parseTypedText, slugOf, suffixedKey, tagsFor, MAX_TAGS } from '../lib/knowledge/entry.js';

// Entries (SPEC §4.1, §4.2): the type prefix, the key, the tags.

describe('parseTypedText', () => {
  it.each([
    ['LEARNED: OAuth redirect URI must match exactly', { type: 'learned', content: 'OAuth redirect URI must match exactly' }],
    ['  \n DECISION:   keep the log append-only  ', { type: 'decision', content: 'keep the log append-only' }],
    ['MUST-CHECK: run migrations before deploy', { type: 'must-check', content: 'run migrations before deploy' }],
    ['DEVIATION: touched the installer too', { type: 'deviation', content: 'touched the installer too' }],
    // the prefix must lead the body; a later prefix is content
    ['LEARNED: the DECISION: was wrong', { type: 'learned', content: 'the DECISION: was wrong' }],
  ])('%j', (body, expected) => {
    expect(parseTypedText(body)).toEqual(expected);
  });

  it.each(['FIX: not a type', 'BUG: neither', 'We LEARNED: nothing', 'learned: lower case is prose', 'LEARNED:', 'LEARNED:   '])(
    '%j is not knowledge',
    (body) => {
      expect(parseTypedText(body)).toBeUndefined();
    },
  );

  it('SKIP: stores nothing', () => {
    expect(parseTypedText('SKIP: nothing worth keeping here')).toBe('skip');
  });
});

describe('keys', () => {
  it('type + slug of the first 60 characters', () => {
    expect(keyOf('learned', 'OAuth redirect URI must match exactly')).toBe('learned-oauth-redirect-uri-must-match-exactly');
    expect(keyOf('fact', 'Use `SELECT … WHERE x = ?` — never interpolate!')).toBe('fact-use-select-where-x-never-interpolate');
    const long = 'a'.repeat(59) + 'bcdef';
    expect(slugOf(long)).toBe('a'.repeat(59) + 'b');
  });

  it('cuts at 60 characters, not bytes, so non-ASCII text does not shorten the key', () => {
    const content = 'é'.repeat(50) + ' then ascii words that follow';
    expect(slugOf(content)).toBe('then-asci'); // 50 é and the next 10 characters
    expect(slugOf('CPF inválido é rejeitado')).toBe('cpf-inv-lido-rejeitado');
  });

  it('text with no ASCII letters or digits gets a hash slug, distinct per content', () => {
    expect(slugOf('日本語のメモ')).toMatch(/^[0-9a-f]{12}$/);
    expect(slugOf('日本語のメモ')).not.toBe(slugOf('別のメモ'));
  });

  it('suffixes -2, -3 for other content under the same key', () => {
    expect(suffixedKey('learned-x', 1)).toBe('learned-x');
    expect(suffixedKey('learned-x', 2)).toBe('learned-x-2');
    expect(suffixedKey('learned-x', 3)).toBe('learned-x-3');
  });
});

describe('tagsFor', () => {
  it('matches vocabulary as whole words only (build is not ui, trust is not rust, good is not go)', () => {
    expect(tagsFor('decision', 'Build artifacts must be trusted; a good default.')).toEqual(['decision', 'build']);
  });

  it('allows plurals, keeps the order of mention, adds languages of mentioned files', () => {
    expect(tagsFor('learned', 'Hooks read the cache before auth; see src/app.tsx and cmd/main.go')).toEqual([
      'learned',
      'hook',
      'cache',
      'auth',
      'typescript',
      'react',
      'go',
    ]);
  });

  it('takes extra vocabulary words and caps at 12 tags', () => {
    expect(tagsFor('fact', 'The NFSe gateway rejects E0014', ['nfse', 'gateway'])).toEqual(['fact', 'nfse', 'gateway']);
    const many = 'api auth security database sqlite test config migration cache hook cli ui css react docker';
    expect(tagsFor('fact', many)).toHaveLength(MAX_TAGS);
  });

  it('is not fooled by look-alike words (task-runner, the file system: ext4)', () => {
    expect(tagsFor('fact', 'the task-runner queues a job on the file system: ext4')).toEqual(['fact', 'queue', 'job']);
    expect(tagsFor('learned', 'retries need jitter; one retry is not enough')).toEqual(['learned', 'retry']);
  });
});

describe('makeEntry', () => {
  it('builds the Lavra line shape with the project', () => {
    expect(
      makeEntry({
        type: 'learned',
        content: 'OAuth redirect URI must match exactly',
        bead: 'beads-abc',
        source: 'hook',
        ts: 1706918400,
        project: 'p1',
      }),
    ).toEqual({
      key: 'learned-oauth-redirect-uri-must-match-exactly',
      type: 'learned',
      content: 'OAuth redirect URI must match exactly',
      source: 'hook',
      tags: ['learned', 'oauth'],
      ts: 1706918400,
      bead: 'beads-abc',
      project: 'p1',
    });
  });
});

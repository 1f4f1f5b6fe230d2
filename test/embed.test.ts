import { describe, it, expect } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES, openTestStore, run, tempProject, type RunResult } from './helpers.js';
import { cosine, fromBlob, parseVectors, runProvider, toBlob } from '../lib/patterns/embeddings.js';
import { CairnError } from '../lib/core/errors.js';
import { patternDb } from '../lib/events/log.js';

// Optional embeddings (SPEC §6): a configured provider executable, vectors cached as Float32 blobs,
// cosine relevance for format-patterns --query, and BM25 whenever the provider is absent or fails.

const PROJECT = 'ledgerly';
const NOW = '2025-03-02T12:00:00Z';
const PROVIDER = `node ${join(FIXTURES, 'embeddings', 'provider.js')}`;

const MAN_PAGE = 'Every new CLI flag must be documented in the man page before merge';
const SESSIONS = 'Refresh session cookies are stored in Postgres rather than Redis'; // the provider maps "session" to the concept of "login"
const INDEX = 'New columns that queries filter on should get an index in the same migration';
const JSON_MODE = 'In JSON mode, progress lines must go to stderr, never to stdout';

function seed(opts: { provider?: string } = {}): string {
  const dir = tempProject();
  if (opts.provider !== undefined)
    writeFileSync(join(dir, '.cairn', 'config.json'), JSON.stringify({ embeddings: { command: opts.provider } }));
  const r = run('store-deliberation', ['--role', 'auditor', '--issue', 'LED-1', '--run', 'r1', '--project', PROJECT, '--strict'], {
    cwd: dir,
    input: `## Plan review\nFine.\n\n## Accumulated Patterns\n${[MAN_PAGE, SESSIONS, INDEX, JSON_MODE].map((t) => `- ${t}`).join('\n')}\n`,
    env: { CAIRN_NOW: '2025-03-01T12:00:00Z' },
  });
  expect(r.code, r.stderr).toBe(0);
  return dir;
}

function cairn(dir: string, args: string[], env: Record<string, string> = {}): RunResult {
  return run('cairn', [...args, '--project', PROJECT], { cwd: dir, env });
}

function embed(
  dir: string,
  env: Record<string, string> = {},
): { texts: number; cached: number; embedded: number; failed: number; dimensions: number | null } {
  const r = cairn(dir, ['embed', '--json', '--strict'], env);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

function ranked(dir: string, query: string, env: Record<string, string> = {}): { result: RunResult; texts: string[] } {
  const result = run('format-patterns', ['--role', 'auditor', '--project', PROJECT, '--query', query, '--json'], {
    cwd: dir,
    env: { CAIRN_NOW: NOW, ...env },
  });
  expect(result.code).toBe(0);
  return { result, texts: (JSON.parse(result.stdout).patterns as { text: string }[]).map((p) => p.text) };
}

describe('parseVectors', () => {
  const wanted = new Set(['a', 'b', 'c']);

  it('reads one vector per id', () => {
    const out = parseVectors('{"id":"a","vector":[1,0]}\n{"id":"b","vector":[0,1]}\n{"id":"c","vector":[0.5,0.5]}\n', wanted);
    expect(out.problems).toEqual([]);
    expect([...out.vectors.keys()]).toEqual(['a', 'b', 'c']);
    expect([...out.vectors.get('c')!]).toEqual([0.5, 0.5]);
  });

  it('reports and skips bad lines, unknown ids, non-numeric vectors and odd dimensions; never throws', () => {
    const stdout = [
      'Loading model...',
      '{"id":"a","vector":[1,0]}',
      '{"id":"zzz","vector":[1,0]}',
      '{"id":"b","vector":["x",1]}',
      '{"id":"c","vector":[1,2,3]}',
      '{"id":"b","vector":[0,1]}',
      '{"id":"a","vector":[0,1]}',
      '[]',
    ].join('\n');
    const out = parseVectors(stdout, wanted);
    expect([...out.vectors.keys()].sort()).toEqual(['a', 'b']);
    expect([...out.vectors.get('a')!]).toEqual([1, 0]);
    expect(out.problems).toEqual([
      'provider output line 1 is not JSON (line 1, column 1)', // the place, never the output itself
      'provider output line 3 has an unknown id "zzz"',
      'provider output line 4 (id b) has no vector of finite numbers',
      'provider output line 8 has an unknown id undefined',
      'provider output line 5 (id c) has 3 dimensions, expected 2',
      'provider output line 7 repeats id a; kept the first',
      'the provider returned no usable vector for 1 of 3 texts',
    ]);
  });

  it('holds every vector to a known dimension', () => {
    const out = parseVectors('{"id":"a","vector":[1,0]}\n', new Set(['a']), 3);
    expect(out.vectors.size).toBe(0);
    expect(out.problems[0]).toBe('provider output line 1 (id a) has 2 dimensions, expected 3');
  });
});

describe('vectors', () => {
  it('round-trip through Float32 blobs', () => {
    const v = Float32Array.from([0.25, -1.5, 3]);
    const blob = toBlob(v);
    expect(blob.length).toBe(12);
    // a blob sliced out of a larger buffer at an odd offset reads back the same
    const shifted = Buffer.concat([Buffer.from([7]), blob]).subarray(1);
    expect([...fromBlob(shifted)]).toEqual([0.25, -1.5, 3]);
  });

  it('cosine is 1 for the same direction, 0 for orthogonal or zero vectors', () => {
    expect(cosine(Float32Array.from([1, 2]), Float32Array.from([2, 4]))).toBeCloseTo(1);
    expect(cosine(Float32Array.from([1, 0]), Float32Array.from([0, 3]))).toBe(0);
    expect(cosine(Float32Array.from([0, 0]), Float32Array.from([1, 1]))).toBe(0);
  });
});

describe('runProvider', () => {
  it('turns a provider that cannot start or fails into a clear error', () => {
    expect(() => runProvider('/nonexistent/embedder', [{ id: 'a', text: 'x' }], 5000)).toThrow(CairnError);
    expect(() => runProvider('/nonexistent/embedder', [{ id: 'a', text: 'x' }], 5000)).toThrow(/embeddings provider exited with code 127/);
    const previous = process.env.EMBED_FIXTURE_MODE;
    process.env.EMBED_FIXTURE_MODE = 'fail';
    try {
      expect(() => runProvider(PROVIDER, [{ id: 'a', text: 'x' }], 5000)).toThrow(/exited with code 1 .*: provider: model not available/);
    } finally {
      if (previous === undefined) delete process.env.EMBED_FIXTURE_MODE;
      else process.env.EMBED_FIXTURE_MODE = previous;
    }
  });

  it("returns the fixture provider's normalised vectors by id", () => {
    const out = runProvider(
      PROVIDER,
      [
        { id: 'a', text: 'login' },
        { id: 'b', text: 'session tokens' },
      ],
      10_000,
    );
    expect(out.problems).toEqual([]);
    expect(out.vectors.get('a')!.length).toBe(64);
    expect(cosine(out.vectors.get('a')!, out.vectors.get('b')!)).toBeCloseTo(1); // one concept for the fixture
  });
});

describe('cairn embed', () => {
  it('embeds every pattern lacking a vector, once; the cache survives a rebuild', () => {
    const dir = seed({ provider: PROVIDER });
    expect(embed(dir)).toEqual({ texts: 4, cached: 0, embedded: 4, failed: 0, dimensions: 64 });
    expect(embed(dir)).toEqual({ texts: 4, cached: 4, embedded: 0, failed: 0, dimensions: 64 });
    expect(cairn(dir, ['rebuild', '--strict']).code).toBe(0);
    expect(embed(dir)).toMatchObject({ cached: 4, embedded: 0 });
    const store = openTestStore(dir, PROJECT);
    const rows = patternDb(store).prepare('SELECT vector FROM embeddings').all() as { vector: Buffer }[];
    expect(rows.map((r) => r.vector.length)).toEqual([256, 256, 256, 256]); // 64 Float32 values
  });

  it('reports malformed provider output and keeps the good vectors', () => {
    const dir = seed({ provider: PROVIDER });
    const r = cairn(dir, ['embed', '--json'], { EMBED_FIXTURE_MODE: 'garbage' });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ texts: 4, embedded: 3, failed: 1, dimensions: 64 });
    expect(r.stderr).toContain('cairn embed: provider output line 1 is not JSON');
    expect(r.stderr).toContain('has 3 dimensions, expected 64');
    expect(embed(dir)).toMatchObject({ cached: 3, embedded: 1 }); // the next run fills the gap
  });

  it('without a provider, or with a failing one, says so on stderr and exits 0 (1 under --strict)', () => {
    const none = seed();
    const r = cairn(none, ['embed']);
    expect(r).toMatchObject({ code: 0, stdout: '' });
    expect(r.stderr).toMatch(/^cairn embed: skipped \(pipeline continues\): no embeddings provider: set "embeddings"/);
    expect(cairn(none, ['embed', '--strict']).code).toBe(1);

    const failing = seed({ provider: PROVIDER });
    const f = cairn(failing, ['embed'], { EMBED_FIXTURE_MODE: 'fail' });
    expect(f).toMatchObject({ code: 0, stdout: '' });
    expect(f.stderr).toContain('provider: model not available');
  });
});

describe('format-patterns --query with embeddings', () => {
  // "login credentials" shares no word with any pattern, so BM25 sees nothing; the provider knows
  // that sessions are about logging in.
  const QUERY = 'login credentials';

  it('ranks by cosine similarity for patterns with a cached vector', () => {
    const dir = seed({ provider: PROVIDER });
    const before = ranked(dir, QUERY).texts; // no vectors yet: BM25, which matches nothing here
    expect(before[0]).not.toBe(SESSIONS);
    embed(dir);
    const after = ranked(dir, QUERY);
    expect(after.result.stderr).toBe('');
    expect(after.texts[0]).toBe(SESSIONS);
    expect(after.texts.indexOf(SESSIONS)).toBeLessThan(after.texts.indexOf(MAN_PAGE)); // above a rule that outscores it without the query
  });

  it('falls back to BM25 with a warning and exit 0 when the provider fails on the query', () => {
    const dir = seed({ provider: PROVIDER });
    embed(dir);
    const bm25 = ranked(seed(), 'progress lines stderr').texts; // the same patterns, no provider at all
    const pidFile = join(dir, 'provider.pid');
    for (const mode of ['fail', 'hang']) {
      const { result, texts } = ranked(dir, 'progress lines stderr', {
        EMBED_FIXTURE_MODE: mode,
        EMBED_FIXTURE_PIDFILE: pidFile,
      });
      expect(result.stderr).toMatch(/^cairn format-patterns: embeddings provider .*; using BM25 relevance/);
      expect(texts).toEqual(bm25);
      expect(texts[0]).toBe(JSON_MODE);
    }
    // the hung provider was killed, not left running after the call
    expect(() => process.kill(Number(readFileSync(pidFile, 'utf8')), 0)).toThrow();
  });

  it("uses BM25 for patterns whose vector does not fit the query's dimension", () => {
    const dir = seed({ provider: PROVIDER });
    embed(dir);
    const { result, texts } = ranked(dir, 'index migration', { EMBED_FIXTURE_MODE: 'garbage' }); // the query comes back with 3 dimensions
    expect(result.stderr).toContain("4 cached vectors differ in dimension from the query's 3; using BM25 for those patterns");
    expect(texts[0]).toBe(INDEX);
  });
});

describe('linking a finding by meaning (SPEC §3.9.1: the provider is used when configured)', () => {
  const EXPIRY = 'Session tokens must expire';
  // shares one word ("expire") with the rule: too little for a link by words; the provider maps
  // password, credentials, session and tokens onto one concept, so their vectors are close (0.91)
  const finding = { id: 'A1', summary: 'Password credentials expire' };
  const text = `## Accumulated Patterns\n- ${EXPIRY}\n- ${INDEX}\n\n<!-- jkz:verdict-json ${JSON.stringify({ verdict: 'FAIL', issues: [finding], must_fix: ['A1'], false_positives: [] })} -->\n`;

  function storeFinding(dir: string, env: Record<string, string> = {}) {
    const r = run(
      'store-deliberation',
      ['--role', 'auditor', '--issue', 'LED-2', '--run', 'r1', '--project', PROJECT, '--json', '--strict'],
      { cwd: dir, input: text, env: { CAIRN_NOW: NOW, ...env } },
    );
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as { links: { finding: string; patterns: string[]; match: string }[] };
  }
  function learned(provider?: string): string {
    const dir = tempProject();
    if (provider !== undefined) writeFileSync(join(dir, '.cairn', 'config.json'), JSON.stringify({ embeddings: { command: provider } }));
    run('store-deliberation', ['--role', 'auditor', '--issue', 'LED-1', '--run', 'r1', '--project', PROJECT, '--strict'], {
      cwd: dir,
      input: `## Accumulated Patterns\n- ${EXPIRY}\n- ${INDEX}\n`,
    });
    if (provider !== undefined) embed(dir);
    return dir;
  }
  it('links the finding to the rule its meaning is closest to, once the rule has a vector', () => {
    const dir = learned(PROVIDER);
    const store = openTestStore(dir, PROJECT);
    const id = (patternDb(store).prepare('SELECT id FROM patterns WHERE text = ?').get(EXPIRY) as { id: string }).id;
    store.close();
    expect(storeFinding(dir).links).toEqual([expect.objectContaining({ finding: 'A1', patterns: [id], match: 'embedding' })]);
  });

  it('without a provider, or when it fails, the finding states its own rule', () => {
    expect(storeFinding(learned()).links).toEqual([expect.objectContaining({ finding: 'A1', match: 'self' })]);
    const failing = learned(PROVIDER);
    const stored = run(
      'store-deliberation',
      ['--role', 'auditor', '--issue', 'LED-2', '--run', 'r1', '--project', PROJECT, '--json', '--strict'],
      {
        cwd: failing,
        input: text,
        env: { CAIRN_NOW: NOW, EMBED_FIXTURE_MODE: 'fail' },
      },
    );
    expect(stored.code).toBe(0);
    expect(stored.stderr).toMatch(/findings are linked by their words only/);
    expect(JSON.parse(stored.stdout).links).toEqual([expect.objectContaining({ finding: 'A1', match: 'self' })]);
  });
});

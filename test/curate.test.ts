import { describe, it, expect } from 'vitest';
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyProposal, proposalHash, proposeCuration } from '../lib/knowledge/curate.js';
import { knowledgeLine, openTestStore, run, tempProject } from './helpers.js';

// cairn curate (SPEC §4.5): a proposal of exact lines with a hash over canonical JSON; applied only
// as reviewed, never from a hook; the log only appended to.

const P = 'cur';
const entry = (key: string, content: string, ts: number, extra: Record<string, unknown> = {}) => knowledgeLine(P, key, content, ts, extra);

function project() {
  const root = tempProject();
  mkdirSync(join(root, 'src'));
  writeFileSync(join(root, 'src', 'app.ts'), '');
  const log = join(root, '.cairn', 'memory', 'knowledge.jsonl');
  mkdirSync(join(root, '.cairn', 'memory'), { recursive: true });
  writeFileSync(
    log,
    [
      entry('fact-retry-uploads', 'Retry uploads with backoff', 100),
      entry('learned-retry-uploads-with-backoff', 'retry uploads with **backoff**.', 200),
      entry('decision-new-way', 'Uploads go through the queue', 300, { supersedes: ['decision-old-way'] }),
      entry('decision-old-way', 'Uploads are sent inline', 50),
      entry('fact-gone', 'The parser lives in src/parser.ts', 60),
      entry('fact-here', 'The app starts in src/app.ts', 70),
    ]
      .map((l) => l + '\n')
      .join(''),
  );
  return { root, log, store: openTestStore(root, P) };
}

describe('proposeCuration', () => {
  it('proposes canonical + superseded for duplicates, superseded for a named predecessor, needs_review for stale', () => {
    const { store, log } = project();
    const before = readFileSync(log, 'utf8');
    const proposal = proposeCuration(store);
    expect(readFileSync(log, 'utf8')).toBe(before); // a dry run writes nothing to the log
    const lines = proposal.lines.map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.key, l.status, l.review_reason])).toEqual([
      ['learned-retry-uploads-with-backoff', 'canonical', 'keeps 1 duplicate(s) of the same content: fact-retry-uploads'],
      ['fact-retry-uploads', 'superseded', 'duplicate of learned-retry-uploads-with-backoff'],
      ['decision-old-way', 'superseded', 'decision-new-way supersedes it'],
      ['fact-gone', 'needs_review', 'the files it names no longer exist: src/parser.ts'],
    ]);
    expect(lines[0]).toMatchObject({
      merged_from: ['fact-retry-uploads'],
      supersedes: ['fact-retry-uploads'],
      review_source: 'cairn curate',
      content: 'retry uploads with **backoff**.',
    });
    expect(lines[1]).toMatchObject({
      superseded_by: 'learned-retry-uploads-with-backoff',
      content: 'Retry uploads with backoff',
      ts: 100,
    });
  });

  it('hashes canonical JSON: the same lines with keys in another order hash alike, other lines do not', () => {
    const { store } = project();
    const { lines, hash } = proposeCuration(store);
    const reordered = lines.map((l) => JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(l)).reverse())));
    expect(reordered).not.toEqual(lines);
    expect(proposalHash(reordered)).toBe(hash);
    expect(proposalHash(lines.slice(1))).not.toBe(hash);
  });
});

describe('applying a proposal', () => {
  it('appends exactly the reviewed lines once; a changed proposal or a wrong hash is refused', () => {
    const { store, log } = project();
    const path = join(store.dir, 'cache', 'proposal.json');
    const proposal = proposeCuration(store);
    writeFileSync(path, JSON.stringify(proposal));
    const before = readFileSync(log, 'utf8');

    expect(() => applyProposal(store, path, 'f'.repeat(64))).toThrow(/the proposal changed since review/);
    const tampered = {
      ...proposal,
      lines: [...proposal.lines.slice(0, -1), proposal.lines.at(-1)!.replace('needs_review', 'canonical')],
    };
    writeFileSync(path, JSON.stringify(tampered));
    expect(() => applyProposal(store, path, proposal.hash)).toThrow(/changed since review/);
    expect(readFileSync(log, 'utf8')).toBe(before);

    writeFileSync(path, JSON.stringify(proposal));
    expect(applyProposal(store, path, proposal.hash)).toEqual({ appended: 4, already: 0 });
    const after = readFileSync(log, 'utf8');
    expect(after.startsWith(before)).toBe(true); // appended, never rewritten
    expect(after.slice(before.length)).toBe(proposal.lines.map((l) => l + '\n').join(''));
    expect(applyProposal(store, path, proposal.hash)).toEqual({ appended: 0, already: 4 });
    expect(proposeCuration(store).lines).toEqual([]); // nothing left to propose
  });

  it('from the command line: never without --confirm (a hook has no terminal), and with it as reviewed', () => {
    const { root, log } = project();
    const dry = run('cairn', ['curate', '--dry-run', '--json', '--strict', '--project', P], { cwd: root });
    expect(dry.code, dry.stderr).toBe(0);
    const { path, hash } = JSON.parse(dry.stdout);
    const before = readFileSync(log, 'utf8');
    const refused = run('cairn', ['curate', '--apply', path, '--project', P], { cwd: root });
    expect(refused.code).toBe(0);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/^cairn curate: skipped \(pipeline continues\): --apply needs --confirm HASH \(not from a hook/);
    expect(readFileSync(log, 'utf8')).toBe(before);
    const applied = run('cairn', ['curate', '--apply', path, '--confirm', hash, '--json', '--strict', '--project', P], {
      cwd: root,
    });
    expect(JSON.parse(applied.stdout)).toEqual({ appended: 4, already: 0 });
  });

  it('--out writes the proposal where asked, making the directories that are not there yet', () => {
    const { root } = project();
    const dry = run(
      'cairn',
      ['curate', '--dry-run', '--json', '--strict', '--project', P, '--out', join('review', 'today', 'proposal.json')],
      { cwd: root },
    );
    expect(dry.code, dry.stderr).toBe(0);
    const { path, hash } = JSON.parse(dry.stdout);
    expect(path).toBe(join(realpathSync(root), 'review', 'today', 'proposal.json'));
    expect(proposalHash(JSON.parse(readFileSync(path, 'utf8')).lines)).toBe(hash);
  });
});

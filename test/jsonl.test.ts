import { describe, it, expect } from 'vitest';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { appendLines, parseJsonLine, readBytes, readLines } from '../lib/io/jsonl.js';
import { Deadline, sleepSync } from '../lib/core/deadline.js';
import { CairnError } from '../lib/core/errors.js';
import { tempProject } from './helpers.js';

// The one JSONL writer/reader: whole lines, torn tails healed, no symlinks followed, chunked reads.

const opts = (path: string, ms = 2000) => ({ deadline: new Deadline(ms), within: dirname(path) });

function logIn(): string {
  return join(tempProject(), '.cairn', 'log.jsonl');
}

describe('appendLines', () => {
  it('writes whole lines and shows the builder the last complete line', () => {
    const path = logIn();
    const seen: (string | undefined)[] = [];
    appendLines(path, (last) => (seen.push(last), ['{"n":1}', '{"n":2}']), opts(path));
    appendLines(path, (last) => (seen.push(last), ['{"n":3}']), opts(path));
    expect(readFileSync(path, 'utf8')).toBe('{"n":1}\n{"n":2}\n{"n":3}\n');
    expect(seen).toEqual([undefined, '{"n":2}']);
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it('writes nothing when the builder returns no lines', () => {
    const path = logIn();
    writeFileSync(path, '{"n":1}\n');
    expect(appendLines(path, () => [], opts(path))).toEqual([]);
    expect(readFileSync(path, 'utf8')).toBe('{"n":1}\n');
  });

  it('starts a fresh line after a torn tail instead of gluing to it', () => {
    const path = logIn();
    writeFileSync(path, '{"n":1}\n{"n":2,"te');
    const seen: (string | undefined)[] = [];
    appendLines(path, (last) => (seen.push(last), ['{"n":3}']), opts(path));
    expect(readFileSync(path, 'utf8')).toBe('{"n":1}\n{"n":2,"te\n{"n":3}\n');
    // the builder is told the last complete line, not the fragment
    expect(seen).toEqual(['{"n":1}']);
    const texts = [...readLines(path)].map((l) => l.text);
    expect(texts).toEqual(['{"n":1}', '{"n":2,"te', '{"n":3}']);
    expect(parseJsonLine(texts[2])).toEqual({ ok: true, value: { n: 3 } });
  });

  it('heals a file that is only a fragment', () => {
    const path = logIn();
    writeFileSync(path, '{"half');
    appendLines(path, (last) => (expect(last).toBeUndefined(), ['{"n":1}']), opts(path));
    expect(readFileSync(path, 'utf8')).toBe('{"half\n{"n":1}\n');
  });

  it('refuses a record containing a newline, writes nothing and releases the lock', () => {
    const path = logIn();
    writeFileSync(path, '{"n":1}\n');
    let caught: unknown;
    try {
      appendLines(path, () => ['{"n":2}', '{"a":\n1}'], opts(path));
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(CairnError);
    expect((caught as CairnError).kind).toBe('input');
    expect(readFileSync(path, 'utf8')).toBe('{"n":1}\n');
    expect(existsSync(`${path}.lock`)).toBe(false);
    appendLines(path, () => ['{"n":2}'], opts(path, 50));
    expect(readFileSync(path, 'utf8')).toBe('{"n":1}\n{"n":2}\n');
  });

  it('writes nothing when its builder runs past the deadline (the write is the commit point), and releases the lock', () => {
    const path = logIn();
    writeFileSync(path, '{"n":1}\n');
    const deadline = new Deadline(30);
    expect(() =>
      appendLines(
        path,
        () => {
          sleepSync(60); // work under the lock: tens of thousands of captured comments compared with the log
          return ['{"n":2}'];
        },
        { deadline, within: dirname(path) },
      ),
    ).toThrow(/deadline of 30 ms passed during recording the change/);
    expect(readFileSync(path, 'utf8')).toBe('{"n":1}\n');
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it('does not follow a symlink at the target path', () => {
    const root = tempProject();
    const victim = join(root, 'victim.txt');
    writeFileSync(victim, 'keep me\n');
    const path = join(root, '.cairn', 'events.jsonl');
    symlinkSync(victim, path);
    let caught: unknown;
    try {
      appendLines(path, () => ['{"n":1}'], opts(path));
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(CairnError);
    expect((caught as CairnError).kind).toBe('store');
    expect(String((caught as Error).message)).toMatch(/ELOOP|symbolic link/);
    expect(readFileSync(victim, 'utf8')).toBe('keep me\n');
    expect(existsSync(`${path}.lock`)).toBe(false);
  });
});

describe('readLines', () => {
  // multi-byte characters (2, 3 and 4 bytes) so that chunk boundaries fall inside characters
  const lines = ['{"t":"ä"}', '', '{"t":"€€€ long enough to span chunks"}', '{"t":"𝄞 clef"}', 'not json', '{"t":"z"}'];

  function written(): { path: string; bytes: Buffer } {
    const path = logIn();
    writeFileSync(path, lines.join('\n') + '\n{"t":"torn');
    return { path, bytes: readFileSync(path) };
  }

  it.each([1, 2, 3, 5, 7, 64, 1 << 20])('yields complete lines with exact byte offsets (chunk %i)', (chunkSize) => {
    const { path, bytes } = written();
    const got = [...readLines(path, 0, chunkSize)];
    expect(got.map((l) => l.text)).toEqual(lines); // the torn last line is not returned
    let expectedOffset = 0;
    for (const l of got) {
      expect(l.offset).toBe(expectedOffset);
      expect(bytes.subarray(l.offset, l.end).toString('utf8')).toBe(l.text + '\n');
      expectedOffset = l.end;
    }
  });

  it('starts from a given offset', () => {
    const { path } = written();
    const all = [...readLines(path)];
    const from = all[2].offset;
    const tail = [...readLines(path, from, 4)];
    expect(tail).toEqual(all.slice(2));
  });

  it('yields nothing for a missing file or a file without a complete line', () => {
    const path = logIn();
    expect([...readLines(path)]).toEqual([]);
    writeFileSync(path, '{"only":"torn"');
    expect([...readLines(path, 0, 3)]).toEqual([]);
  });

  it('refuses a log that is not a regular file at once, instead of reading it without end', () => {
    const path = logIn();
    symlinkSync('/dev/zero', path);
    const started = Date.now();
    expect(() => [...readLines(path)]).toThrow(/log\.jsonl is not a regular file/);
    expect(() => readBytes(path, 0, 10)).toThrow(/log\.jsonl is not a regular file/);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('readBytes reads a range and is short at the end of the file', () => {
    const path = logIn();
    writeFileSync(path, 'abcdef');
    expect(readBytes(path, 2, 3).toString()).toBe('cde');
    expect(readBytes(path, 4, 10).toString()).toBe('ef');
  });
});

describe('parseJsonLine', () => {
  it('accepts objects and reports everything else without throwing', () => {
    expect(parseJsonLine(' {"a":1} ')).toEqual({ ok: true, value: { a: 1 } });
    expect(parseJsonLine('')).toEqual({ ok: false, reason: 'empty line' });
    expect(parseJsonLine('[1,2]')).toEqual({ ok: false, reason: 'not a JSON object' });
    expect(parseJsonLine('null')).toEqual({ ok: false, reason: 'not a JSON object' });
    const torn = parseJsonLine('{"a":');
    expect(torn.ok).toBe(false);
    expect(torn.ok ? '' : torn.reason).toMatch(/^invalid JSON/);
  });
});

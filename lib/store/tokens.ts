import { createRequire } from 'node:module';
import type { Database } from './db.js';
import { sha256 } from '../core/text.js';
import { CairnError } from '../core/errors.js';
import type { Deadline } from '../core/deadline.js';

// tiktoken counts cached per (encoding, text); the tokenizer loads only on a miss.

const require = createRequire(import.meta.url);

interface Encoder {
  encode(text: string, allowedSpecial?: 'all' | string[], disallowedSpecial?: 'all' | string[]): Uint32Array;
  free(): void;
}

const encoders = new Map<string, Encoder>();

/** WebAssembly: --jitless or a low ulimit -v break it; callers go on with the UTF-8 byte bound (SPEC §3.5). */
export class TokenizerUnavailable extends CairnError {
  constructor(reason: string) {
    super('database', `tiktoken is not loadable (${reason})`);
  }
}

export function encoderFor(encoding: string): Encoder {
  let encoder = encoders.get(encoding);
  if (!encoder) {
    let tiktoken: { get_encoding(name: string): Encoder };
    try {
      tiktoken = require('tiktoken');
    } catch (err) {
      throw new TokenizerUnavailable((err as Error).message.split('\n')[0]);
    }
    try {
      encoder = tiktoken.get_encoding(encoding);
    } catch {
      throw new CairnError('input', `unknown tokenizer encoding '${encoding}' in config.json`);
    }
    encoders.set(encoding, encoder);
  }
  return encoder;
}

/** Longer texts count as their byte length (an upper bound). */
const TOKENIZED_BYTES = 16 * 1024;

export class TokenCounter {
  private loaded = false;
  private memo = new Map<string, number>();
  private pending = new Map<string, number>();
  private readonly lookup;

  constructor(
    private readonly db: Database,
    readonly encoding: string,
    private readonly deadline: Deadline,
  ) {
    this.lookup = db.prepare('SELECT tokens FROM token_counts WHERE key = ?');
  }

  /** The tokenizer was needed (benchmarks and tests watch this). */
  get loadedTokenizer(): boolean {
    return this.loaded;
  }

  count(text: string): number {
    const known = this.known(text);
    if (known !== undefined) return known;
    const n = this.encode(text);
    this.pending.set(this.key(text), n);
    this.memo.set(text, n);
    return n;
  }

  /** Never loads the tokenizer (a hook's path). */
  known(text: string): number | undefined {
    const hit = this.memo.get(text);
    if (hit !== undefined) return hit;
    const row = this.lookup.get(this.key(text)) as { tokens: number } | undefined;
    if (row) this.memo.set(text, row.tokens);
    return row?.tokens;
  }

  private key(text: string): string {
    return sha256(`${this.encoding}\u0000${text}`).slice(0, 32);
  }

  private encode(text: string): number {
    const bytes = Buffer.byteLength(text);
    // far beyond any block: not worth the tokenizer's time; bytes bound tokens (SPEC §3.5)
    if (bytes > TOKENIZED_BYTES) return bytes;
    if (!this.loaded) this.deadline.check('loading the tokenizer'); // cannot be interrupted
    this.loaded = true;
    // special-token text counts as plain text, never rejected
    return encoderFor(this.encoding).encode(text, [], []).length;
  }

  /** Best effort (a read-only database still formats). */
  save(): void {
    if (this.pending.size === 0) return;
    try {
      const insert = this.db.prepare('INSERT OR IGNORE INTO token_counts (key, tokens) VALUES (?, ?)');
      this.db.transaction(() => {
        for (const [key, n] of this.pending) insert.run(key, n);
      })();
      this.pending.clear();
    } catch {
      // computed again next time
    }
  }

  dispose(): void {
    this.save();
  }
}

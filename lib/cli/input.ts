import { readFileSync } from 'node:fs';
import { CairnError } from '../core/errors.js';
import { DEFAULT_STDIN_CAP, decodeUtf8Prefix } from '../io/read.js';
import type { Context } from './runner.js';
import { optionalString } from './flags.js';

/** Text from `--<flag> PATH` when given, else stdin; capped like stdin. */
export async function textFromFileOrStdin(ctx: Context, flag: string): Promise<string> {
  const path = optionalString(ctx.args, flag);
  return path === null ? ctx.stdin() : readTextFile(ctx, flag, path);
}

/** A text file named by `--<flag>`: capped like stdin, and binary content is an input error. */
export function readTextFile(ctx: Context, flag: string, path: string): string {
  let buf: Buffer;
  try {
    buf = readFileSync(path);
  } catch (err) {
    throw new CairnError('input', `cannot read --${flag} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const cut = buf.length > DEFAULT_STDIN_CAP;
  if (cut) {
    ctx.log.warn(`${path} exceeds ${DEFAULT_STDIN_CAP} bytes; working on the first ${DEFAULT_STDIN_CAP}`);
    buf = buf.subarray(0, DEFAULT_STDIN_CAP);
  }
  return decodeUtf8Prefix(buf, cut, path);
}

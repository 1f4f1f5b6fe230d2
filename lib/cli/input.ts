import { realpathSync } from 'node:fs';
import { isAbsolute, resolve, sep } from 'node:path';
import { CairnError } from '../core/errors.js';
import { DEFAULT_INPUT_CAP, decodeUtf8Prefix, readPathBounded, readStdinBounded, type BoundedInput, type InputLimits } from '../io/read.js';
import type { Deadline } from '../core/deadline.js';
import type { Context } from './runner.js';
import { optionalString } from './flags.js';

// Input text (SPEC §2): stdin and `--*-file` flags, one bounded reader, one cap, one wait.

const WAIT_WITHOUT_DEADLINE_MS = 5000;

/** A writer waits at least this for input still arriving rather than keep a run without it. */
const KEEPING_WAIT_MS = 250;

export function inputLimits(deadline: Deadline, keepsRuns = false): InputLimits {
  const cap = Number(process.env.CAIRN_STDIN_CAP) > 0 ? Number(process.env.CAIRN_STDIN_CAP) : DEFAULT_INPUT_CAP;
  // half of what is left, so the work on what arrived still fits
  const half = Number.isFinite(deadline.at) ? Math.floor(deadline.remaining() / 2) : WAIT_WITHOUT_DEADLINE_MS;
  return { cap, waitMs: keepsRuns ? Math.max(half, KEEPING_WAIT_MS) : half };
}

const limits = (ctx: Context) => inputLimits(ctx.deadline, ctx.keepsRuns);

/** Recorded as the run's input (given again to a kept run); a writer skips the check to keep its run. */
function decode(ctx: Context, input: BoundedInput, what: string, flag: string, { cap, waitMs }: InputLimits): string {
  if (input.truncated) ctx.log.warn(`${what} exceeded ${cap} bytes; working on the first ${cap}`);
  if (input.timedOut) ctx.log.warn(`${what} was still open after ${waitMs} ms; working on the ${input.bytes.length} bytes read`);
  const text = (ctx.inputs[flag] = decodeUtf8Prefix(input.bytes, input.truncated, what));
  if (!ctx.keepsRuns) ctx.deadline.check(`reading ${what}`);
  return text;
}

export async function stdinText(ctx: Context, reading?: Promise<BoundedInput>): Promise<string> {
  if (ctx.replayed) return (ctx.inputs.stdin = ctx.replayed.stdin ?? '');
  const l = limits(ctx);
  return decode(ctx, await (reading ?? readStdinBounded(l)), 'stdin', 'stdin', l);
}

export async function textFromFileOrStdin(ctx: Context, flag: string): Promise<string> {
  const path = optionalString(ctx.args, flag);
  return path === null ? ctx.stdin() : readTextFile(ctx, flag, path);
}

export function inputName(ctx: Context, flag: string): string {
  const path = optionalString(ctx.args, flag);
  return path === null ? 'stdin' : `--${flag} ${path}`;
}

/** This process's own stdin (reopening fails for a socket). */
const STDIN_NAMES = new Set(['-', '/dev/stdin', '/dev/fd/0', '/proc/self/fd/0']);

export async function readTextFile(ctx: Context, flag: string, path: string): Promise<string> {
  if (ctx.replayed) return (ctx.inputs[flag] = ctx.replayed[flag] ?? '');
  const what = `--${flag} ${path}`;
  const l = limits(ctx);
  const input = STDIN_NAMES.has(path)
    ? await readStdinBounded(l)
    : await readPathBounded(commandLinePath(path, ctx.location().root, what), l, what);
  return decode(ctx, input, what, flag, l);
}

/** A relative path must resolve inside the project root (SPEC §2); an absolute one is the caller's choice. */
export function commandLinePath(path: string, root: string, what: string): string {
  if (isAbsolute(path)) return path;
  const full = resolve(path);
  let real: string;
  try {
    real = realpathSync(full);
  } catch {
    return full; // missing: the reader says so
  }
  const realRoot = realOrSelf(root);
  if (real !== realRoot && !real.startsWith(realRoot + sep)) {
    throw new CairnError(
      'input',
      `${what} leads outside the project root ${root} (a relative path must stay inside it; give an absolute path for a file elsewhere)`,
    );
  }
  return real; // exactly what was checked
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

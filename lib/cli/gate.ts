import { deadlineFromEnv } from '../core/deadline.js';
import { DEFERRED_ENV } from '../core/deferred-env.js';
import { decodeUtf8Prefix, readStdinBounded } from '../io/read.js';
import { readHookInput, type HookInput } from '../hosts/payload.js';
import { inputLimits } from './input.js';
import type { GatePassed } from './runner.js';

// A hook's hot path before the runner loads: a payload the command ignores ends the process as the runner would.

const STORE_FLAGS = new Set(['--root', '--dir', '--project']);
const QUIET_FLAGS = new Set(['--quiet', '--strict', '--json']);

/** The store flags given, or undefined when `argv` holds any other flag. */
export function storeFlags(argv: string[]): { root?: string; dir?: string; project?: string } | undefined {
  const given: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const eq = argv[i].indexOf('=');
    const flag = eq > 0 ? argv[i].slice(0, eq) : argv[i];
    if (QUIET_FLAGS.has(flag) && eq < 0) continue;
    if (!STORE_FLAGS.has(flag) || (eq < 0 && i + 1 >= argv.length)) return undefined;
    given[flag.slice(2)] = eq > 0 ? argv[i].slice(eq + 1) : argv[++i];
  }
  return given;
}

export async function hookGate(
  argv: string[],
  deadlineMs: number,
  wanted: (input: HookInput) => boolean,
  keepsRuns = false,
): Promise<GatePassed | undefined> {
  const deadline = deadlineFromEnv(deadlineMs);
  // a kept run reads its payload from its request (lib/store/deferred.ts)
  if (!storeFlags(argv) || process.env[DEFERRED_ENV]) return { deadline };
  const stdin = readStdinBounded(inputLimits(deadline, keepsRuns));
  let text: string;
  try {
    const read = await stdin;
    if (read.truncated || read.timedOut) return { deadline, stdin }; // the runner warns about it
    text = decodeUtf8Prefix(read.bytes, false);
  } catch {
    return { deadline, stdin }; // unreadable: the runner reports it
  }
  return wanted(readHookInput(text)) ? { deadline, stdin } : undefined;
}

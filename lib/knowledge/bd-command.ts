import { simpleCommands, type SimpleCommand } from '../core/shell.js';
import { codexCallFailed } from '../hosts/codex.js';
import type { HookInput } from '../hosts/payload.js';

// At command positions only (SPEC §4.2): `echo "bd comments add …"` is text.

export interface BdComment {
  bead: string;
  text: string;
}

const VALUE_FLAGS = new Set(['-a', '--author', '-f', '--file', '--actor', '--db']);
const STDIN_FILES = new Set(['-', '/dev/stdin']);

/** The hot path's pre-check. */
export function mayAddComment(command: string): boolean {
  return /\bbd\b/.test(command) && /\bcomments?\W{1,8}add\b/.test(command);
}

/** A shell command that ran, did not fail, may add a bd comment. */
export function mayCapture(input: HookInput): input is HookInput & { command: string } {
  return input.command !== null && !input.toolFailed && mayAddComment(input.command) && !codexCallFailed(input);
}

/** In order; `checkpoint` runs after each command read. */
export function bdComments(command: string, checkpoint?: () => void): BdComment[] {
  if (!mayAddComment(command)) return [];
  const out: BdComment[] = [];
  for (const cmd of simpleCommands(command, checkpoint)) {
    checkpoint?.();
    const comment = asComment(cmd);
    if (comment) out.push(comment);
  }
  return out;
}

function asComment(cmd: SimpleCommand): BdComment | undefined {
  const w = cmd.words;
  if (w[0] !== 'bd' && !/\/bd$/.test(w[0])) return undefined;
  let k = 1;
  while (k < w.length && w[k].startsWith('-')) k += VALUE_FLAGS.has(w[k]) ? 2 : 1; // global flags before the subcommand
  if ((w[k] !== 'comments' && w[k] !== 'comment') || w[k + 1] !== 'add') return undefined;
  const positional: string[] = [];
  let file: string | undefined;
  let flagsEnded = false;
  for (let i = k + 2; i < w.length; i++) {
    const word = w[i];
    if (!flagsEnded && word === '--') flagsEnded = true;
    else if (!flagsEnded && word.startsWith('-') && word.length > 1) {
      const [flag, inline] = word.split(/=(.*)/s, 2);
      const value = inline ?? (VALUE_FLAGS.has(flag) ? w[++i] : undefined);
      if (flag === '-f' || flag === '--file') file = value;
    } else positional.push(word);
  }
  const [bead, ...rest] = positional;
  if (!bead) return undefined;
  // `--file -` reads stdin: a here-document is the only stdin we can see
  if (file !== undefined) return STDIN_FILES.has(file) && cmd.heredoc !== undefined ? { bead, text: cmd.heredoc } : undefined;
  return rest.length ? { bead, text: rest.join(' ') } : undefined;
}

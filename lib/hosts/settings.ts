import { existsSync } from 'node:fs';
import { readSmallFile } from '../io/read.js';
import { basename, dirname, join, relative } from 'node:path';
import { CairnError } from '../core/errors.js';
import { asObject, type Json, jsonErrorPlace } from '../core/json.js';
import { writeFileAtomic } from '../io/atomic.js';

// A host's hook settings file, merged in place (SPEC §7): cairn's entries are added beside the user's
// own, never replacing or reordering them; an entry of cairn's already there for the event is left
// as it is, so running `cairn init --<host>` again changes nothing. Two layouts exist:
//   nested (Claude Code, Codex, Gemini CLI): {hooks: {Event: [{matcher?, hooks: [{type, command, …}]}]}}
//   flat (Cursor):                           {version: 1, hooks: {event: [{command, …}]}}

export type Layout = 'nested' | 'flat';

export interface HookEntry {
  event: string;
  /** The tool the entry is for (nested layout), e.g. Bash. */
  matcher?: string;
  /** The handler object as the host reads it; its `command` runs a cairn executable. */
  handler: { command: string } & Json;
}

export interface HostHooks {
  /** The settings file, relative to the project root. */
  file: string;
  layout: Layout;
  /** Keys a new file starts with (Cursor's `version`). */
  base?: Json;
  /**
   * The project root as a hook command can name it: the variable the host sets, or GIT_TOP_LEVEL
   * where the host sets none (Codex runs hooks in the session's directory, Cursor in the project's
   * or its .cursor/ — git finds the root from either; see projectDirExpression).
   */
  projectDir: string;
  /** What the user must still do on the host's side, if anything. */
  note?: string;
  /** cairn's entries, with the executables invoked as `exe(name)` gives. */
  entries(exe: (name: string) => string): HookEntry[];
}

/** The project root for hosts that set no variable for it. */
export const GIT_TOP_LEVEL = '"$(git rev-parse --show-toplevel)"';

/** The executables cairn's hooks run. */
export const HOOK_EXECUTABLES = ['auto-recall', 'memory-capture'];

/** A word for sh: as it is when plain, else single-quoted. */
export function shellWord(text: string): string {
  return /^[\w./@%+=:,-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The work tree git reports as top level for `root`: the first directory up holding `.git` (a directory, or a file for worktrees and submodules). */
export function gitTopLevel(root: string): string | null {
  for (let dir = root; ; dir = dirname(dir)) {
    if (existsSync(join(dir, '.git'))) return dir;
    if (dirname(dir) === dir) return null;
  }
}

/**
 * The project root as a hook of `hooks`' host names it. Where the host sets no variable, git's top
 * level stands for it when it is the root; a root below it (a package of a monorepo with its own
 * .cairn/) is reached from there, and a project outside git is named by its path (nothing shares
 * its settings through git).
 */
export function projectDirExpression(root: string, hooks: HostHooks): string {
  if (hooks.projectDir !== GIT_TOP_LEVEL) return hooks.projectDir;
  const top = gitTopLevel(root);
  if (top === null) return shellWord(root);
  const below = relative(top, root);
  return below === '' ? GIT_TOP_LEVEL : `${GIT_TOP_LEVEL}/${shellWord(below)}`;
}

/**
 * How a hook invokes a cairn executable: through the project's node_modules when cairn is a dev
 * dependency there (hosts run hooks with a shell, not npm, so node_modules/.bin is not on PATH),
 * else by name from PATH (a global install).
 */
export function executableCommand(root: string, hooks: HostHooks, name: string): string {
  return existsSync(join(root, 'node_modules', '.bin', name)) ? `${projectDirExpression(root, hooks)}/node_modules/.bin/${name}` : name;
}

/** The program a command line runs (first word, quotes removed), e.g. `"$X"/bin/auto-recall -v` → `$X/bin/auto-recall`. */
export function commandProgram(command: string): string {
  const first = /^\s*((?:"[^"]*"|'[^']*'|[^\s"'])+)/.exec(command);
  return first ? first[1].replace(/["']/g, '') : '';
}

function runsSameExecutable(a: string, b: string): boolean {
  return basename(commandProgram(a)) === basename(commandProgram(b));
}

/** The event lists of a settings object's `hooks`, as found (anything unexpected reads as empty). */
function eventList(settings: Json, event: string): unknown[] {
  const list = asObject(settings.hooks)?.[event];
  return Array.isArray(list) ? list : [];
}

/** Every command configured for `event`, in either layout. */
export function commandsFor(settings: Json, layout: Layout, event: string): string[] {
  const handlers = layout === 'flat' ? eventList(settings, event) : eventList(settings, event).flatMap((g) => (Array.isArray(asObject(g)?.hooks) ? (asObject(g)!.hooks as unknown[]) : []));
  return handlers.map((h) => asObject(h)?.command).filter((c): c is string => typeof c === 'string');
}

/** Add the entries an event does not have yet; returns the new settings and the entries added. */
export function mergeHooks(settings: Json, layout: Layout, entries: HookEntry[]): { settings: Json; added: HookEntry[] } {
  const hooks: Json = { ...(asObject(settings.hooks) ?? {}) };
  const added: HookEntry[] = [];
  for (const entry of entries) {
    if (commandsFor({ hooks }, layout, entry.event).some((c) => runsSameExecutable(c, entry.handler.command))) continue;
    const group = layout === 'flat' ? entry.handler : { ...(entry.matcher ? { matcher: entry.matcher } : {}), hooks: [entry.handler] };
    hooks[entry.event] = [...eventList({ hooks }, entry.event), group];
    added.push(entry);
  }
  return { settings: { ...settings, hooks }, added };
}

const SETTINGS_CAP = 4 * 1024 * 1024;

/** A settings file as an object ({} when absent); a file that is not a JSON object is never overwritten. */
export function readSettings(path: string): Json {
  const text = readSmallFile(path, SETTINGS_CAP)?.toString('utf8') ?? ''; // a device or a huge file in its place is an error
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new CairnError('input', `${path} is not valid JSON (${jsonErrorPlace(text, err)}); left as it is`);
  }
  const obj = asObject(value);
  if (!obj) throw new CairnError('input', `${path} is not a JSON object; left as it is`);
  if (obj.hooks !== undefined && asObject(obj.hooks) === null) throw new CairnError('input', `${path}: "hooks" is not an object; left as it is`);
  return obj;
}

/**
 * Merge cairn's hooks into the host's settings file under `root`; written (atomically) only when
 * something was added. `storeDir`: a store outside the project (`cairn init --dir`), which the hooks
 * must be told, or their first capture would start a store of the project's own.
 */
export function installHooks(root: string, hooks: HostHooks, storeDir?: string): { path: string; added: HookEntry[] } {
  const path = join(root, hooks.file);
  const current = readSettings(path);
  const start = Object.keys(current).length === 0 ? { ...hooks.base } : current;
  const dirFlag = storeDir === undefined ? '' : ` --dir ${shellWord(storeDir)}`;
  const { settings, added } = mergeHooks(start, hooks.layout, hooks.entries((name) => executableCommand(root, hooks, name) + dirFlag));
  if (added.length > 0) writeFileAtomic(path, JSON.stringify(settings, null, indentOf(path)) + '\n', root);
  return { path, added };
}

/** Keep the file's own indentation (two spaces for a new file). */
function indentOf(path: string): string {
  try {
    return /\n([ \t]+)"/.exec(readSmallFile(path, SETTINGS_CAP)?.toString('utf8') ?? '')?.[1] ?? '  ';
  } catch {
    return '  ';
  }
}

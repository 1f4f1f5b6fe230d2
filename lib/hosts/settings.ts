import { existsSync } from 'node:fs';
import { readSmallFile } from '../io/read.js';
import { basename, dirname, join, relative } from 'node:path';
import { CairnError } from '../core/errors.js';
import { asObject, type Json, jsonErrorPlace } from '../core/json.js';
import { writeFileAtomic } from '../io/atomic.js';

// A host's hook settings merged in place (SPEC §7): beside the user's entries, never reordering them; idempotent.

export type Layout = 'nested' | 'flat';

export interface HookEntry {
  event: string;
  matcher?: string;
  handler: { command: string } & Json;
}

export interface HostHooks {
  file: string;
  layout: Layout;
  base?: Json;
  /** The host's variable, or GIT_TOP_LEVEL where it sets none. */
  projectDir: string;
  note?: string;
  entries(exe: (name: string) => string): HookEntry[];
  /** Why an earlier cairn's handler no longer works (init replaces it, doctor fails it), or null. */
  outdated?(handler: Json): string | null;
}

export const GIT_TOP_LEVEL = '"$(git rev-parse --show-toplevel)"';

export const HOOK_EXECUTABLES = ['auto-recall', 'memory-capture'];

export function shellWord(text: string): string {
  return /^[\w./@%+=:,-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** `.git` is a directory, or a file for worktrees and submodules. */
export function gitTopLevel(root: string): string | null {
  for (let dir = root; ; dir = dirname(dir)) {
    if (existsSync(join(dir, '.git'))) return dir;
    if (dirname(dir) === dir) return null;
  }
}

/** A root below git's top level (a monorepo package) is reached from there, one outside git by its path. */
function projectDirExpression(root: string, hooks: Pick<HostHooks, 'projectDir'>): string {
  if (hooks.projectDir !== GIT_TOP_LEVEL) return hooks.projectDir;
  const top = gitTopLevel(root);
  if (top === null) return shellWord(root);
  const below = relative(top, root);
  return below === '' ? GIT_TOP_LEVEL : `${GIT_TOP_LEVEL}/${shellWord(below)}`;
}

/** Via node_modules for a dev dependency (hosts run hooks with a shell: .bin is not on PATH), else from PATH. */
export function executableCommand(root: string, hooks: Pick<HostHooks, 'projectDir'>, name: string): string {
  return existsSync(join(root, 'node_modules', '.bin', name)) ? `${projectDirExpression(root, hooks)}/node_modules/.bin/${name}` : name;
}

export function commandProgram(command: string): string {
  const first = /^\s*((?:"[^"]*"|'[^']*'|[^\s"'])+)/.exec(command);
  return first ? first[1].replace(/["']/g, '') : '';
}

function runsSameExecutable(a: string, b: string): boolean {
  return basename(commandProgram(a)) === basename(commandProgram(b));
}

function eventList(settings: Json, event: string): unknown[] {
  const list = asObject(settings.hooks)?.[event];
  return Array.isArray(list) ? list : [];
}

function handlersOf(settings: Json, layout: Layout, event: string): Json[] {
  const groups = eventList(settings, event);
  const nested = (g: unknown) => (Array.isArray(asObject(g)?.hooks) ? (asObject(g)!.hooks as unknown[]) : []);
  const handlers = layout === 'flat' ? groups : groups.flatMap(nested);
  return handlers.map((h) => asObject(h)).filter((h): h is Json => h !== null);
}

export function commandsFor(settings: Json, layout: Layout, event: string): string[] {
  return handlersOf(settings, layout, event)
    .map((h) => h.command)
    .filter((c): c is string => typeof c === 'string');
}

export interface PlacedHandler {
  matcher?: string;
  handler: Json;
  group: number;
  index: number;
}

function isCairns(handler: Json | null): handler is Json & { command: string } {
  return typeof handler?.command === 'string' && HOOK_EXECUTABLES.includes(basename(commandProgram(handler.command)));
}

export function placedHandlers(settings: Json, event: string): PlacedHandler[] {
  return eventList(settings, event).flatMap((g, group) => {
    const obj = asObject(g);
    const matcher = typeof obj?.matcher === 'string' ? obj.matcher : undefined;
    const handlers = Array.isArray(obj?.hooks) ? obj!.hooks : [];
    return handlers.flatMap((h, index) => {
      const handler = asObject(h);
      return isCairns(handler) ? [{ ...(matcher === undefined ? {} : { matcher }), handler, group, index }] : [];
    });
  });
}

export function outdatedHandlers(
  settings: Json,
  hooks: Pick<HostHooks, 'layout' | 'outdated'>,
  event: string,
): { handler: Json; reason: string }[] {
  const { outdated } = hooks;
  if (!outdated) return [];
  return handlersOf(settings, hooks.layout, event).flatMap((handler) => {
    const reason = isCairns(handler) ? outdated(handler) : null;
    return reason === null ? [] : [{ handler, reason }];
  });
}

function withoutHandlers(settings: Json, layout: Layout, event: string, drop: Json[]): Json {
  const kept = eventList(settings, event).flatMap((g) => {
    const group = asObject(g);
    if (!group) return [g];
    if (layout === 'flat') return drop.includes(group) ? [] : [g];
    if (!Array.isArray(group.hooks)) return [g];
    const handlers = group.hooks.filter((h) => !drop.includes(h as Json));
    if (handlers.length === group.hooks.length) return [g];
    return handlers.length > 0 ? [{ ...group, hooks: handlers }] : [];
  });
  const hooks: Json = { ...(asObject(settings.hooks) ?? {}), [event]: kept };
  if (kept.length === 0) delete hooks[event];
  return { ...settings, hooks };
}

export interface Merged {
  settings: Json;
  added: HookEntry[];
  replaced: { event: string; reason: string }[];
}

/** One already running the executable (in any form) stays unless outdated. */
export function mergeHooks(settings: Json, hooks: Pick<HostHooks, 'layout' | 'outdated'>, entries: HookEntry[]): Merged {
  const { layout } = hooks;
  let current: Json = { ...settings, hooks: { ...(asObject(settings.hooks) ?? {}) } };
  const replaced: Merged['replaced'] = [];
  for (const event of new Set(entries.map((e) => e.event))) {
    const stale = outdatedHandlers(current, hooks, event);
    if (stale.length === 0) continue;
    current = withoutHandlers(
      current,
      layout,
      event,
      stale.map((s) => s.handler),
    );
    replaced.push(...stale.map(({ reason }) => ({ event, reason })));
  }
  const before = current;
  const result: Json = { ...(asObject(current.hooks) ?? {}) };
  const added: HookEntry[] = [];
  let lastGroup: { event: string; matcher?: string; group: Json } | null = null;
  for (const entry of entries) {
    if (commandsFor(before, layout, entry.event).some((c) => runsSameExecutable(c, entry.handler.command))) continue;
    added.push(entry);
    if (layout === 'flat') {
      result[entry.event] = [...eventList({ hooks: result }, entry.event), entry.handler];
      continue;
    }
    if (lastGroup && lastGroup.event === entry.event && lastGroup.matcher === entry.matcher) {
      (lastGroup.group.hooks as Json[]).push(entry.handler);
      continue;
    }
    const group: Json = { ...(entry.matcher ? { matcher: entry.matcher } : {}), hooks: [entry.handler] };
    result[entry.event] = [...eventList({ hooks: result }, entry.event), group];
    lastGroup = { event: entry.event, matcher: entry.matcher, group };
  }
  return { settings: { ...current, hooks: result }, added, replaced };
}

/** When auto-recall cannot run (exit 127), a message tells the agent so (SPEC §2: never silent). */
export function sessionStartCommand(exe: (name: string) => string, args: string, envelope: (text: string) => string): string {
  const program = exe('auto-recall');
  return `${program} ${args} || echo ${shellWord(envelope(notInstalledMessage(commandProgram(program))).trimEnd())}`;
}

function notInstalledMessage(program: string): string {
  const dependency = program.includes('/node_modules/.bin/');
  const remedy = dependency ? 'run npm install at the project root' : 'install cairn (README: Install cairn in your project)';
  const lost = 'so the memory of this project is neither recalled nor captured';
  return `cairn: ${basename(program)} could not run here, ${lost}: ${remedy}, then run cairn doctor.`;
}

const SETTINGS_CAP = 4 * 1024 * 1024;

/** A file that is not a JSON object is never overwritten. */
export function readSettings(path: string): Json {
  const text = readSmallFile(path, SETTINGS_CAP)?.toString('utf8') ?? '';
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new CairnError('input', `${path} is not valid JSON (${jsonErrorPlace(text, err)}); left as it is`);
  }
  const obj = asObject(value);
  if (!obj) throw new CairnError('input', `${path} is not a JSON object; left as it is`);
  if (obj.hooks !== undefined && asObject(obj.hooks) === null)
    throw new CairnError('input', `${path}: "hooks" is not an object; left as it is`);
  return obj;
}

/** Written only when something was added; `storeDir` outside the project must reach the hooks, or they start another store. */
export function installHooks(root: string, hooks: HostHooks, storeDir?: string): Merged & { path: string } {
  let merged: Merged | undefined;
  const path = updateSettings(root, hooks.file, hooks.base, (current) => {
    merged = mergeHooks(
      current,
      hooks,
      hooks.entries((name) => executableCommand(root, hooks, name) + dirFlag(storeDir)),
    );
    return merged.added.length > 0 ? merged.settings : undefined;
  });
  return { path, ...merged! };
}

export function dirFlag(storeDir: string | undefined): string {
  return storeDir === undefined ? '' : ` --dir ${shellWord(storeDir)}`;
}

/** Rewritten whole (temp, rename) in its own indentation. */
export function updateSettings(root: string, file: string, base: Json | undefined, merge: (settings: Json) => Json | undefined): string {
  const path = join(root, file);
  const current = readSettings(path);
  const next = merge(Object.keys(current).length === 0 ? { ...base } : current);
  if (next !== undefined) writeFileAtomic(path, JSON.stringify(next, null, indentOf(path)) + '\n', root);
  return path;
}

function indentOf(path: string): string {
  try {
    return /\n([ \t]+)"/.exec(readSmallFile(path, SETTINGS_CAP)?.toString('utf8') ?? '')?.[1] ?? '  ';
  } catch {
    return '  ';
  }
}

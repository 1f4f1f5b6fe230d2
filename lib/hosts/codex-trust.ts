import { homedir } from 'node:os';
import { join } from 'node:path';
import { realpathSync } from 'node:fs';
import stringify from 'fast-json-stable-stringify';
import { sha256 } from '../core/crypto.js';
import type { Json } from '../core/json.js';
import { readSmallFile } from '../io/read.js';
import { gitTopLevel, placedHandlers } from './settings.js';

// Codex (0.171.0) runs a project's .codex/ hooks only once $CODEX_HOME/config.toml has `[projects."<dir>"] trust_level =
// "trusted"` and each hook's `[hooks.state."…"] trusted_hash` matches; an untrusted or changed hook is skipped silently.

export function codexHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.CODEX_HOME || join(env.HOME || homedir(), '.codex');
}

type TomlValue = string | boolean;
export type TomlTables = Map<string, Map<string, TomlValue>>;

/** As much TOML as Codex writes for trust: string and boolean values, by table. */
export function readTomlTables(text: string): TomlTables {
  const tables: TomlTables = new Map([['[]', new Map()]]);
  let current: Map<string, TomlValue> | null = tables.get('[]')!;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('[[')) {
      current = null;
      continue;
    }
    if (line.startsWith('[')) {
      const parts = keyParts(line.slice(1));
      const name = parts?.rest.trimStart().startsWith(']') ? JSON.stringify(parts.keys) : null;
      current = name === null ? null : (tables.get(name) ?? tables.set(name, new Map()).get(name)!);
      continue;
    }
    const pair = keyParts(line);
    if (!current || !pair || pair.keys.length !== 1) continue;
    const value = /^\s*=\s*(.*)$/.exec(pair.rest)?.[1];
    const parsed = value === undefined ? undefined : tomlValue(value);
    if (parsed !== undefined) current.set(pair.keys[0], parsed);
  }
  return tables;
}

function keyParts(text: string): { keys: string[]; rest: string } | null {
  const keys: string[] = [];
  let rest = text;
  for (;;) {
    rest = rest.trimStart();
    const bare = /^[A-Za-z0-9_-]+/.exec(rest)?.[0];
    const length = bare?.length ?? quotedLength(rest);
    const part = bare ?? (length === null ? null : quoted(rest.slice(0, length)));
    if (length === null || part === null) return null;
    keys.push(part);
    rest = rest.slice(length).trimStart();
    if (!rest.startsWith('.')) return { keys, rest };
    rest = rest.slice(1);
  }
}

function quotedLength(text: string): number | null {
  const m = text[0] === '"' ? /^"(?:[^"\\]|\\.)*"/.exec(text) : text[0] === "'" ? /^'[^']*'/.exec(text) : null;
  return m ? m[0].length : null;
}

/** JSON's escapes plus \UXXXXXXXX; null when not a string. */
function quoted(literal: string): string | null {
  const body = literal.slice(1, -1);
  if (literal[0] === "'") return body;
  try {
    const char = (hex: string) => JSON.stringify(String.fromCodePoint(parseInt(hex, 16))).slice(1, -1);
    return JSON.parse(`"${body.replace(/\\U([0-9A-Fa-f]{8})/g, (_, hex: string) => char(hex))}"`) as string;
  } catch {
    return null;
  }
}

function tomlValue(text: string): TomlValue | undefined {
  const value = text.trim();
  const length = quotedLength(value);
  if (length !== null) {
    const rest = value.slice(length);
    return /^\s*(#.*)?$/.test(rest) ? (quoted(value.slice(0, length)) ?? undefined) : undefined;
  }
  const word = value.replace(/\s*#.*$/, '');
  return word === 'true' ? true : word === 'false' ? false : undefined;
}

export function codexEventLabel(event: string): string {
  return event.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/** sha256 of canonical JSON of event, matcher and handler as Codex reads it (timeout defaulted to 600 s). */
export function codexHookHash(event: string, matcher: string | undefined, handler: Json): string {
  const timeout = typeof handler.timeout === 'number' ? Math.max(1, handler.timeout) : 600;
  const normalised: Json = { type: 'command', command: handler.command, timeout, async: handler.async === true };
  if (typeof handler.statusMessage === 'string') normalised.statusMessage = handler.statusMessage;
  const identity: Json = { event_name: codexEventLabel(event), hooks: [normalised] };
  if (matcher !== undefined) identity.matcher = matcher;
  return `sha256:${sha256(stringify(identity))}`;
}

/** Null, or the problem and what to do (fatal when hooks are lost). */
export function codexTrustProblem(
  root: string,
  settings: Json,
  events: string[],
  env: NodeJS.ProcessEnv = process.env,
): { fatal: boolean; detail: string } | null {
  const hooks = events.flatMap((event) => placedHandlers(settings, event).map((placed) => ({ event, ...placed })));
  const home = codexHome(env);
  let text: string | undefined;
  try {
    text = readSmallFile(join(home, 'config.toml'), 4 * 1024 * 1024)?.toString('utf8');
  } catch {
    text = undefined;
  }
  if (text === undefined) {
    const what = 'Codex runs them only once you trust the project and then the hooks: start codex here, /hooks';
    return { fatal: false, detail: `${what} (codex exec too; no ${join(home, 'config.toml')} yet)` };
  }
  const tables = readTomlTables(text);
  const table = (...keys: string[]) => tables.get(JSON.stringify(keys));
  const places = [...new Set([root, gitTopLevel(root) ?? root].flatMap((dir) => [dir, realOrSame(dir)]))];
  const levels = places.map((dir) => table('projects', dir)?.get('trust_level'));
  if (!levels.includes('trusted')) {
    const why = levels.includes('untrusted') ? 'Codex is told not to trust this project' : 'Codex does not trust this project yet';
    const what = 'start codex here and trust the folder (codex exec --trust)';
    return { fatal: true, detail: `${why}, so it reads no .codex/ here and runs none of its hooks: ${what}` };
  }
  const untrusted: string[] = [];
  const changed: string[] = [];
  for (const hook of hooks) {
    const place = `${codexEventLabel(hook.event)}:${hook.group}:${hook.index}`;
    const key = (dir: string) => `${join(dir, '.codex', 'hooks.json')}:${place}`;
    const state = places.map((dir) => table('hooks', 'state', key(dir))).find((s) => s !== undefined);
    if (state?.get('enabled') === false) untrusted.push(`${hook.event} (disabled)`);
    else if (typeof state?.get('trusted_hash') !== 'string') untrusted.push(hook.event);
    else if (state.get('trusted_hash') !== codexHookHash(hook.event, hook.matcher, hook.handler)) {
      changed.push(hook.event);
    }
  }
  if (untrusted.length > 0) {
    const what = 'start codex here and trust them in /hooks (codex exec needs them trusted too)';
    return {
      fatal: true,
      detail: `Codex has not trusted cairn's ${untrusted.join(', ')} hook(s) and skips them without a word: ${what}`,
    };
  }
  if (changed.length > 0) {
    const what = 'changed since Codex trusted them (cairn init rewrote them), so Codex skips them';
    return { fatal: true, detail: `cairn's ${changed.join(', ')} hook(s) ${what}: trust them again in /hooks` };
  }
  return null;
}

function realOrSame(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return dir;
  }
}

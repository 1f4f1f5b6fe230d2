import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { basename, delimiter, isAbsolute, join, resolve } from 'node:path';
import { describeError } from '../core/errors.js';
import type { Check } from '../store/health.js';
import { CONFIGURABLE_HOSTS, HOST_HOOKS } from './registry.js';
import { commandProgram, commandsFor, HOOK_EXECUTABLES, readSettings } from './settings.js';

// `cairn doctor`, the hosts' side (SPEC §2): which host settings run cairn's hooks, and whether each
// hook's program would be found when the host runs it.

/** Where a hook command's program is on this machine, or null. Hosts run hooks from the project root. */
export function resolveProgram(program: string, root: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const expanded = program
    .replace(/\$\(git rev-parse --show-toplevel\)/g, root)
    .replace(/\$\{?(CLAUDE_PROJECT_DIR|GEMINI_PROJECT_DIR)\}?/g, root)
    .replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (_, name: string) => env[name] ?? '');
  if (expanded.includes('/')) {
    const path = isAbsolute(expanded) ? expanded : resolve(root, expanded);
    return isExecutable(path) ? path : null;
  }
  for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) {
    const path = join(dir, expanded);
    if (isExecutable(path)) return path;
  }
  return null;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** One check per host: not configured (off), every cairn hook resolving (ok), or what is wrong (fail). */
export function hookChecks(root: string, env: NodeJS.ProcessEnv = process.env): Check[] {
  return CONFIGURABLE_HOSTS.map((host) => {
    const hooks = HOST_HOOKS[host];
    const name = `hooks: ${host}`;
    if (!existsSync(join(root, hooks.file))) return { name, status: 'off', detail: `no ${hooks.file} (cairn init --${host})` };
    let settings;
    try {
      settings = readSettings(join(root, hooks.file));
    } catch (err) {
      return { name, status: 'fail', detail: describeError(err) };
    }
    const found = hooks
      .entries((n) => n)
      .flatMap((entry) => commandsFor(settings, hooks.layout, entry.event).map((command) => ({ event: entry.event, command })))
      .filter(({ command }) => HOOK_EXECUTABLES.includes(basename(commandProgram(command))));
    if (found.length === 0) return { name, status: 'off', detail: `${hooks.file} runs no cairn hook (cairn init --${host})` };
    const missing = found.filter(({ command }) => resolveProgram(commandProgram(command), root, env) === null);
    const listed = found.map(({ event, command }) => `${event} → ${basename(commandProgram(command))}`).join(', ');
    if (missing.length === 0) return { name, status: 'ok', detail: `${hooks.file}: ${listed}` };
    const programs = [...new Set(missing.map(({ command }) => `'${commandProgram(command)}'`))].join(', ');
    return { name, status: 'fail', detail: `${hooks.file}: ${programs} not found (install cairn: npm i -D cairn, or npm i -g cairn)` };
  });
}

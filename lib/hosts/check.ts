import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { basename, delimiter, isAbsolute, join, resolve } from 'node:path';
import { describeError } from '../core/errors.js';
import type { Check } from '../store/health.js';
import { codexTrustProblem } from './codex-trust.js';
import { CONFIGURABLE_HOSTS, HOST_HOOKS, type ConfigurableHost } from './registry.js';
import { commandProgram, commandsFor, gitTopLevel, HOOK_EXECUTABLES, outdatedHandlers, readSettings } from './settings.js';

// Doctor's and init's view of the hosts (SPEC §2): which settings run cairn's hooks, and whether each program is found.

/** Without npm's directories, so a hook found only there fails in sessions. */
export function hostPath(env: NodeJS.ProcessEnv = process.env): string {
  const entries = (env.PATH ?? '').split(delimiter).filter(Boolean);
  if (env.npm_command === undefined) return entries.join(delimiter);
  return entries.filter((dir) => !/[\\/]node_modules[\\/]\.bin$|[\\/]_npx[\\/]|[\\/]node-gyp-bin$/.test(dir)).join(delimiter);
}

/** `env.PATH` is searched as given (see hostPath). */
export function resolveProgram(program: string, root: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const expanded = program
    .replace(/\$\(git rev-parse --show-toplevel\)/g, gitTopLevel(root) ?? '')
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

/** `programs: false` skips finding their programs. */
export function hookCheck(root: string, host: ConfigurableHost, env: NodeJS.ProcessEnv = process.env, { programs = true } = {}): Check {
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
    .flatMap((entry) =>
      commandsFor(settings, hooks.layout, entry.event).map((command) => ({
        event: entry.event,
        program: commandProgram(command),
      })),
    )
    .filter(({ program }) => HOOK_EXECUTABLES.includes(basename(program)));
  if (found.length === 0) return { name, status: 'off', detail: `${hooks.file} runs no cairn hook (cairn init --${host})` };
  const lookup = { ...env, PATH: hostPath(env) };
  const unresolved = programs ? found.filter(({ program }) => resolveProgram(program, root, lookup) === null) : [];
  const missing = [...new Set(unresolved.map(({ program }) => program))];
  if (missing.length > 0) {
    const remedy = missing.some((p) => p.includes('/node_modules/.bin/'))
      ? 'not found: npm install here (the hooks run cairn as a dev dependency)'
      : 'not found on PATH: install cairn (README: Install cairn)';
    return { name, status: 'fail', detail: `${hooks.file}: ${missing.map((p) => `'${p}'`).join(', ')} ${remedy}` };
  }
  const events = [...new Set(found.map(({ event }) => event))];
  const outdated = events.flatMap((event) =>
    outdatedHandlers(settings, hooks, event).map(({ handler, reason }) => {
      const program = basename(commandProgram(String(handler.command)));
      return `${event} → ${program} ${reason}`;
    }),
  );
  if (outdated.length > 0) {
    return { name, status: 'fail', detail: `${hooks.file}: ${outdated.join('; ')} — cairn init --${host} replaces it` };
  }
  const untrusted = host === 'codex' ? codexTrustProblem(root, settings, events, env) : null;
  if (untrusted) {
    return { name, status: untrusted.fatal ? 'fail' : 'warn', detail: `${hooks.file}: ${untrusted.detail}` };
  }
  const runs = [...new Set(found.map(({ event, program }) => `${event} → ${basename(program)}`))];
  return { name, status: 'ok', detail: `${hooks.file}: ${runs.join(', ')}` };
}

export function hookChecks(root: string, env: NodeJS.ProcessEnv = process.env): Check[] {
  return CONFIGURABLE_HOSTS.map((host) => hookCheck(root, host, env));
}

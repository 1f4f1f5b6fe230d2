import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, join } from 'node:path';
import type { Deadline } from '../core/deadline.js';
import type { HookInput } from '../hosts/payload.js';
import { DEFAULT_CONFIG, loadConfig, type Config } from '../store/config.js';
import { locate } from '../store/root.js';

// Bead titles (SPEC §4.4): both `bd list` calls at once, each cut at its timeout.

const require = createRequire(import.meta.url);

const MAX_TITLES = 20;

export interface BeadListing {
  root: string;
  titles: Promise<string[]>;
}

/** The configured timeout, at most a quarter of the time left. */
export function bdTimeout(config: Config, deadline: Deadline): number {
  return Math.min(config.knowledge.bdTimeoutMs, deadline.remaining() / 4);
}

/** Before the store opens: bd is most of a session start's wait. */
export function earlyBeadListing(
  flags: { root?: string; dir?: string; project?: string },
  input: HookInput,
  deadline: Deadline,
): BeadListing | undefined {
  if (flags.root !== undefined) return undefined;
  // before the runner's fail-open handling: whatever goes wrong is left to it
  try {
    const { root, dir } = locate({ dir: flags.dir, project: flags.project, payloadCwd: input.cwd ?? undefined });
    let config = DEFAULT_CONFIG;
    try {
      config = loadConfig(dir);
    } catch {
      // the runner reports a broken config.json and runs on the defaults
    }
    return { root, titles: beadTitles(root, bdTimeout(config, deadline)) };
  } catch {
    return undefined;
  }
}

/** Never rejects: the titles that arrived in time. */
export function beadTitles(root: string, timeoutMs: number): Promise<string[]> {
  if (!existsSync(join(root, '.beads'))) return Promise.resolve([]);
  const bd = onPath('bd');
  if (!bd) return Promise.resolve([]);
  const { execFile } = require('node:child_process') as typeof import('node:child_process');
  const list = (status: string) =>
    new Promise<string[]>((resolve) => {
      execFile(
        bd,
        ['list', `--status=${status}`, '--json'],
        { cwd: root, timeout: timeoutMs, maxBuffer: 8 << 20, windowsHide: true },
        (err, stdout) => resolve(err ? [] : titlesOf(stdout, status)),
      );
    });
  return Promise.all([list('in_progress'), list('open')]).then(([working, open]) =>
    [...new Set([...working, ...open])].slice(0, MAX_TITLES),
  );
}

/** Only of the status asked for when issues carry one. */
export function titlesOf(stdout: string, status: string): string[] {
  let rows: unknown;
  try {
    rows = JSON.parse(stdout);
  } catch {
    return [];
  }
  if (!Array.isArray(rows)) return [];
  return rows
    .filter(
      (r): r is { title: string; status?: unknown } =>
        r !== null && typeof r === 'object' && typeof (r as { title?: unknown }).title === 'string',
    )
    .filter((r) => typeof r.status !== 'string' || r.status === status)
    .map((r) => r.title);
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

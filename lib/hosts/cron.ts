import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { hostPath, resolveProgram } from './check.js';
import { shellWord } from './settings.js';

// The crontab lines for nightly maintenance: pattern deprecation (SPEC §3.4) and knowledge rotation
// (§4.5). Cron runs them with its own bare environment (PATH=/usr/bin:/bin, no npm), so `npx` and a
// cairn found through the user's shell PATH both fail there, silently, every night. The lines name
// the executable by path — the project's node_modules/.bin, else where it is installed globally —
// and put node's directory on PATH when node is not in /usr/bin (nvm, Homebrew, a tarball), for the
// executables' `#!/usr/bin/env node`.

const CRON_PATH = ['/usr/bin', '/bin'];

export interface CronOptions {
  /** A store outside the project (`cairn init --dir`). */
  storeDir?: string;
  env?: NodeJS.ProcessEnv;
  /** The node that runs cairn now: cron needs its directory on PATH when it is not in /usr/bin. */
  nodePath?: string;
}

export function cronLines(
  root: string,
  { storeDir, env = process.env, nodePath = process.execPath }: CronOptions = {},
): string[] {
  const cairn = existsSync(join(root, 'node_modules', '.bin', 'cairn'))
    ? 'node_modules/.bin/cairn'
    : shellWord(resolveProgram('cairn', root, { ...env, PATH: hostPath(env) }) ?? 'cairn');
  const nodeDir = dirname(nodePath);
  const path = CRON_PATH.includes(nodeDir) ? '' : `PATH=${shellWord(nodeDir)}:$PATH `;
  const run = `cd ${shellWord(root)} && ${path}${cairn}`;
  const dir = storeDir === undefined ? '' : ` --dir ${shellWord(storeDir)}`;
  return [`17 3 * * * ${run} maintain${dir} --quiet`, `27 3 * * * ${run} rotate${dir} --quiet`];
}

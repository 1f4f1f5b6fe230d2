import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { hostPath, resolveProgram } from './check.js';
import { shellWord } from './settings.js';

// Nightly maintenance (SPEC §3.4, §4.5). Cron's PATH=/usr/bin:/bin has no npm: the lines name executables by path.

const CRON_PATH = ['/usr/bin', '/bin'];

export interface CronOptions {
  storeDir?: string;
  env?: NodeJS.ProcessEnv;
  nodePath?: string;
}

export function cronLines(root: string, { storeDir, env = process.env, nodePath = process.execPath }: CronOptions = {}): string[] {
  const cairn = existsSync(join(root, 'node_modules', '.bin', 'cairn'))
    ? 'node_modules/.bin/cairn'
    : shellWord(resolveProgram('cairn', root, { ...env, PATH: hostPath(env) }) ?? 'cairn');
  const nodeDir = dirname(nodePath);
  const path = CRON_PATH.includes(nodeDir) ? '' : `PATH=${shellWord(nodeDir)}:$PATH `;
  const run = `cd ${shellWord(root)} && ${path}${cairn}`;
  const dir = storeDir === undefined ? '' : ` --dir ${shellWord(storeDir)}`;
  return [`17 3 * * * ${run} maintain${dir} --quiet`, `27 3 * * * ${run} rotate${dir} --quiet`];
}

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// What `npm run test:hosts` needs before its first session: the host CLIs at the versions pinned in
// test/hosts/package.json (and its lock), installed into a cache directory keyed by their hash —
// never into the project's own node_modules, which a user of cairn installs — and cairn itself,
// packed from this checkout and installed into a throwaway project the way the README installs it.

// runs in vitest's global setup (and bench/hosts.ts), where test/helpers.ts cannot be loaded
const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const HOSTS_PACKAGE = join(REPO, 'test', 'hosts');

/** Where the installs are kept between runs: $CAIRN_TEST_HOSTS_CACHE, else ~/.cache/cairn-test-hosts. */
export function cacheDir(): string {
  return process.env.CAIRN_TEST_HOSTS_CACHE ?? join(homedir(), '.cache', 'cairn-test-hosts');
}

const sha = (...parts: string[]) => createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 16);

function npm(args: string[], cwd: string): void {
  const env = { ...process.env, npm_config_update_notifier: 'false' };
  const r = spawnSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, encoding: 'utf8', env });
  if (r.status !== 0) throw new Error(`npm ${args.join(' ')} in ${cwd} failed (${r.status}):\n${r.stderr}${r.stdout}`);
}

function timed<T>(what: string, work: () => T): T {
  const started = Date.now();
  const result = work();
  process.stderr.write(`test:hosts: ${what} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  return result;
}

/** The pinned host CLIs' bin directory, installed on first use (`npm ci` of the pinned lock). */
export function installHosts(): string {
  const files = ['package.json', 'package-lock.json'];
  const dir = join(cacheDir(), `hosts-${sha(...files.map((f) => readFileSync(join(HOSTS_PACKAGE, f), 'utf8')))}`);
  const bin = join(dir, 'node_modules', '.bin');
  if (existsSync(join(dir, '.installed'))) return bin;
  mkdirSync(cacheDir(), { recursive: true });
  const staging = mkdtempSync(join(cacheDir(), 'staging-'));
  for (const f of files) copyFileSync(join(HOSTS_PACKAGE, f), join(staging, f));
  timed('installed the pinned host CLIs', () => npm(['ci'], staging));
  writeFileSync(join(staging, '.installed'), '');
  rmSync(dir, { recursive: true, force: true });
  renameSync(staging, dir);
  removeOthers('hosts-', dir);
  return bin;
}

/**
 * `npm pack` of this checkout, into a fresh directory: the tarball's path. Its build (prepare) is not
 * run again: like every process-level test, test:hosts runs what `npm run build` last built.
 */
export function packCairn(): string {
  const into = mkdtempSync(join(tmpdir(), 'cairn-pack-'));
  timed('packed cairn', () => npm(['pack', '--ignore-scripts', '--pack-destination', into], REPO));
  const version = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
  return join(into, `cairn-${version}.tgz`);
}

/**
 * A project with cairn installed from `tarball` as the README says (`npm install --save-dev`). It is
 * kept between runs (keyed by cairn's dependencies and this node), so only the first run builds
 * better-sqlite3; each run installs its own tarball over the last one.
 */
export function installCairnProject(tarball: string): string {
  const { dependencies } = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { dependencies: object };
  const dir = join(cacheDir(), `project-${sha(JSON.stringify(dependencies), process.version, process.platform, process.arch)}`);
  mkdirSync(dir, { recursive: true });
  const manifest = { name: 'hosts-project', version: '1.0.0', private: true };
  if (!existsSync(join(dir, 'package.json'))) writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');
  timed('installed cairn into the project', () => npm(['install', '--save-dev', tarball], dir));
  rmSync(dirname(tarball), { recursive: true, force: true });
  removeOthers('project-', dir);
  return dir;
}

/** Installs of earlier pins (hundreds of MB each) go once a new one is in place. */
function removeOthers(prefix: string, keep: string): void {
  for (const name of readdirSync(cacheDir())) {
    const path = join(cacheDir(), name);
    if (name.startsWith(prefix) && path !== keep) rmSync(path, { recursive: true, force: true });
  }
}

// How a child process is measured:
// - wall time from the parent (hrtime around spawnSync), the figure the targets are stated in;
// - peak RSS of the child from GNU time (`/usr/bin/time -f %M`, kilobytes), or, where GNU time is
//   missing, process.resourceUsage().maxRSS reported by a preload;
// - CPU time (user + system) of the child from the same preload: a `--require`d CommonJS file that
//   writes process.resourceUsage() to fd 3 on exit. CPU time hardly moves when other processes
//   compete for the machine, so it cross-checks wall-time ratios taken on a busy host. The preload
//   is a few lines of CommonJS (no ESM loader start-up), and the baseline gets it too.

import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

const GNU_TIME = '/usr/bin/time';

function hasGnuTime() {
  if (!existsSync(GNU_TIME)) return false;
  const probe = spawnSync(GNU_TIME, ['-f', '%M', 'true'], { encoding: 'utf8' });
  return probe.status === 0 && /^\d+$/.test(probe.stderr.trim().split('\n').pop() ?? '');
}

// CAIRN_BENCH_MEMORY=resource-usage forces the fallback (to check it on a machine that has GNU time).
export const MEMORY_METHOD = process.env.CAIRN_BENCH_MEMORY !== 'resource-usage' && hasGnuTime() ? 'gnu-time' : 'resource-usage';

const scratch = mkdtempSync(join(tmpdir(), 'cairn-bench-measure-'));
const timeOut = join(scratch, 'time.out');
const preload = join(scratch, 'usage.cjs');
writeFileSync(
  preload,
  `const { writeSync } = require('node:fs');
process.on('exit', () => {
  const u = process.resourceUsage();
  try { writeSync(3, (u.userCPUTime + u.systemCPUTime) + ' ' + u.maxRSS); } catch {}
});
`,
);

export function cleanupMeasure() {
  rmSync(scratch, { recursive: true, force: true });
}

/**
 * What every bench script needs around its measurements: progress lines and numbers for stderr,
 * temporary directories (kept with --keep, else removed at the end), and a failure that cleans up.
 */
export function benchSession(name, { keep = false } = {}) {
  const temps = [];
  const progress = (message) => process.stderr.write(`bench: ${message}\n`);
  return {
    progress,
    fmt: (n, d = 0) => n.toLocaleString('en', { minimumFractionDigits: d, maximumFractionDigits: d }),
    tempDir(tag) {
      const dir = mkdtempSync(join(tmpdir(), `cairn-bench-${name}${tag}-`));
      temps.push(dir);
      return dir;
    },
    cleanup() {
      if (keep) progress(`kept: ${temps.join(' ')}`);
      else for (const dir of temps) rmSync(dir, { recursive: true, force: true });
      cleanupMeasure();
    },
    fail(message) {
      cleanupMeasure();
      progress(message);
      process.exit(1);
    },
  };
}

/**
 * Run `node <args>` once. Returns {ms, cpuMs, rssKb, code, stdout, stderr}.
 * `stdinFile` is opened as the child's stdin; otherwise stdin is /dev/null (never a TTY).
 */
export function runNode(args, { cwd, env, stdinFile } = {}) {
  const stdinFd = openSync(stdinFile ?? '/dev/null', 'r');
  try {
    const node = [process.execPath, '--require', preload, ...args];
    const [cmd, ...argv] = MEMORY_METHOD === 'gnu-time' ? [GNU_TIME, '-o', timeOut, '-f', '%M', ...node] : node;
    const start = process.hrtime.bigint();
    const res = spawnSync(cmd, argv, {
      cwd,
      env,
      stdio: [stdinFd, 'pipe', 'pipe', 'pipe'],
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (res.error) throw res.error;
    const [cpuUs, maxRss] = String(res.output[3] ?? '')
      .split(' ')
      .map(Number);
    // GNU time prints "Command exited with non-zero status N" before the figure when the child fails.
    const rssKb = MEMORY_METHOD === 'gnu-time' ? Number(readFileSync(timeOut, 'utf8').trim().split('\n').pop()) : maxRss;
    return { ms, cpuMs: cpuUs / 1000, rssKb, code: res.status, stdout: res.stdout, stderr: res.stderr };
  } finally {
    closeSync(stdinFd);
  }
}

export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * `runs` rounds, each a `node -e 0` baseline then the measured command (interleaved, so drift in
 * machine load hits both alike). `before` runs untimed before each measured run (e.g. restore a
 * pristine store); `check` validates each measured result and throws on a wrong product.
 */
export function measure({ runs, ...one }) {
  return measureTogether(runs, [one])[0];
}

/**
 * Several commands measured in the same rounds: each round runs each of them once, each after its
 * own `node -e 0` baseline. Two commands compared with each other (one workload on a store of 10k
 * and of 100k patterns) then meet the same drift in the machine's speed, where measured minutes
 * apart they did not (this VM's `node -e 0` moves 20–30 % between phases).
 */
export function measureTogether(runs, cases) {
  const rounds = cases.map(() => ({ base: [], cmd: [] }));
  for (let i = 0; i < runs; i++) {
    cases.forEach(({ args, cwd, env, stdinFile, before, check, after }, c) => {
      rounds[c].base.push(runNode(['-e', '0'], { cwd, env }));
      before?.();
      const res = runNode(args, { cwd, env, stdinFile });
      if (res.code !== 0) throw new Error(`exit ${res.code}: node ${args.join(' ')}\n${res.stderr}`);
      check?.(res);
      rounds[c].cmd.push(res);
      after?.(); // (what the command left running is waited for before the next baseline)
    });
  }
  return rounds.map(({ base, cmd }) => summarise(base, cmd));
}

function summarise(base, cmd) {
  const of = (list, key) => list.map((r) => r[key]);
  const ms = median(of(cmd, 'ms'));
  const baseMs = median(of(base, 'ms'));
  const cpuMs = median(of(cmd, 'cpuMs'));
  const baseCpuMs = median(of(base, 'cpuMs'));
  return {
    ms,
    baseMs,
    ratio: ms / baseMs,
    minMs: Math.min(...of(cmd, 'ms')),
    maxMs: Math.max(...of(cmd, 'ms')),
    cpuMs,
    baseCpuMs,
    cpuRatio: cpuMs / baseCpuMs,
    peakRssMb: Math.max(...of(cmd, 'rssKb')) / 1024,
    baseRssMb: median(of(base, 'rssKb')) / 1024,
  };
}

export function machine() {
  let cpu = cpus()[0]?.model ?? 'unknown';
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (m) cpu = m[1].trim();
  } catch {
    // not Linux: os.cpus() it is
  }
  return {
    node: process.version,
    cpu,
    cores: cpus().length,
    platform: `${process.platform} ${process.arch}`,
    load: loadavg()
      .map((l) => l.toFixed(2))
      .join(' '),
  };
}

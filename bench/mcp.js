#!/usr/bin/env node
// `cairn mcp` and `cairn report` at scale (issue 31's targets): the server's start against `node -e
// 0` (interleaved rounds, medians; target ≤ 2×), each tool's call once the server is warm on a store of
// 100k patterns and 100k knowledge entries (target ≤ 50 ms, measured by the SDK's own client over
// stdio, as a host calls it), and the report's build at 100k events (target ≤ 2 s). A markdown report
// goes to stdout, progress to stderr; it exits 1 when a call fails or a product is wrong.
//
//   node bench/mcp.js                              100k patterns, 100k entries, 100k events
//   node bench/mcp.js --patterns 2000 --entries 2000 --events 5000 --runs 5   a smoke run
//   node bench/mcp.js --keep                       keep the temporary projects

import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { benchSession, machine, measure, median } from './measure.js';
import { makeProject, writeEventLog, writeKnowledgeLog, PROJECT } from './stores.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CAIRN = join(REPO, 'bin', 'cairn.js');
const LOAD_AT_START = machine().load;

const { values: opts } = parseArgs({
  options: {
    runs: { type: 'string', default: '7' },
    calls: { type: 'string', default: '50' },
    patterns: { type: 'string', default: '100000' },
    entries: { type: 'string', default: '100000' },
    events: { type: 'string', default: '100000' },
    keep: { type: 'boolean', default: false },
  },
});
const { progress, fmt, tempDir, cleanup, fail } = benchSession('mcp-', { keep: Boolean(opts.keep) });
const RUNS = Number(opts.runs);
const CALLS = Number(opts.calls);
const PATTERNS = Number(opts.patterns);
const ENTRIES = Number(opts.entries);
const EVENTS = Number(opts.events);
if (!Number.isInteger(RUNS) || RUNS < 5) fail('--runs must be an integer ≥ 5');

const NOW = '2026-04-20T10:00:00.000Z';
const inherited = Object.entries(process.env).filter(([k]) => !k.startsWith('CAIRN_'));
const env = { ...Object.fromEntries(inherited), CAIRN_NOW: NOW };

/** `cairn <args>` in a project, checked. */
function cairn(cwd, args) {
  const argv = [CAIRN, ...args, '--project', PROJECT, '--strict'];
  const r = spawnSync(process.execPath, argv, { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) fail(`cairn ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r;
}

/** A project of `patterns` auditor patterns (1/20 as many of three other roles), `entries` knowledge entries. */
function bigStore(patterns, entries) {
  const dir = makeProject(tempDir(`store-${patterns}`));
  const small = Math.max(1, Math.round(patterns / 20));
  progress(`writing ${fmt(patterns)} auditor patterns' events and ${fmt(entries)} knowledge entries`);
  const roles = { auditor: patterns, judge: small, sentinel: small, curator: small };
  const log = writeEventLog(join(dir, '.cairn', 'events.jsonl'), { patterns: roles, nowMs: Date.parse(NOW), seed: 31 });
  const knowledge = join(dir, '.cairn', 'memory', 'knowledge.jsonl');
  // as rotation keeps a long-lived store (SPEC §4.5): 4,000 lines in the log, the rest in its archive
  const logLines = Math.min(entries, 4000);
  writeKnowledgeLog(knowledge, { entries: logLines, seed: 31, project: PROJECT, nowMs: Date.parse(NOW) });
  const archive = join(dir, '.cairn', 'memory', 'knowledge.archive.jsonl');
  if (entries > logLines) writeKnowledgeLog(archive, { entries: entries - logLines, seed: 32, project: PROJECT, nowMs: Date.parse(NOW) });
  progress(`indexing ${fmt(log.events)} events and the knowledge log and archive`);
  cairn(dir, ['rebuild']);
  cairn(dir, ['recall', '--all', '--stats']);
  waitForBackground(dir);
  return { dir, events: log.events };
}

/** Wait (≤ 60 s) for the background `cairn rebuild --continue` a large rebuild starts. */
function waitForBackground(dir) {
  const started = Date.now();
  while (spawnSync('pgrep', ['-f', `rebuild --continue --quiet --root ${dir}`]).status === 0) {
    if (Date.now() - started > 60_000) fail(`the background rebuild in ${dir} did not end within 60 s`);
    spawnSync('sleep', ['0.2']);
  }
}

async function connect(cwd) {
  const args = [CAIRN, 'mcp', '--project', PROJECT];
  const transport = new StdioClientTransport({ command: process.execPath, args, cwd, env, stderr: 'pipe' });
  const client = new Client({ name: 'cairn-bench', version: '1' });
  const started = process.hrtime.bigint();
  await client.connect(transport);
  return { client, transport, ms: Number(process.hrtime.bigint() - started) / 1e6 };
}

/** `node -e 0`, spawned as the server is, waited for to exit. */
function nodeNothing() {
  return new Promise((done) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, ['-e', '0'], { env, stdio: 'ignore' });
    child.on('exit', () => done(Number(process.hrtime.bigint() - started) / 1e6));
  });
}

const rows = [];
const QUERIES = ['session token refresh', 'sqlite migration lock', 'bd comments capture hook', 'auto-recall fence'];
const CHANGE = { role: 'auditor', files: ['src/cli/status.ts'], labels: ['cli'] };
const add = (name, value, target, verdict, note = '') => rows.push({ name, value, target, verdict, note });

// the server's start: spawn to the answer to initialize, against node -e 0, in the same rounds
async function startCase(cwd) {
  progress('server start against node -e 0');
  const base = [];
  const server = [];
  for (let i = 0; i < RUNS + 1; i++) {
    const b = await nodeNothing();
    const { client, ms } = await connect(cwd);
    await client.close();
    if (i === 0) continue; // the first start writes the bundle's code cache
    base.push(b);
    server.push(ms);
  }
  const ratio = median(server) / median(base);
  const value = `${fmt(median(server))} ms (node -e 0: ${fmt(median(base))} ms) = ${fmt(ratio, 2)}×`;
  const spread = `min–max ${fmt(Math.min(...server))}–${fmt(Math.max(...server))} ms`;
  add('cairn mcp: start (spawn → initialize answered)', value, '≤ 2×', ratio <= 2 ? 'met' : '**missed**', spread);
}

// each tool once the server is warm: its first call (SQLite, the indexes, the pattern-history index) is apart
async function callCases(dir) {
  const { client, transport } = await connect(dir);
  const block = await call(client, 'patterns', { role: 'auditor', files: ['src/cli/status.ts'], labels: ['cli'] });
  const shortId = /\[(p[0-9a-f]{6})\]/.exec(block.text)?.[1];
  if (!shortId) fail(`the patterns tool printed no block:\n${block.text}`);
  const tools = [
    ['recall', (i) => ({ query: QUERIES[i % QUERIES.length] })],
    ['patterns', () => CHANGE],
    ['patterns', () => ({ ...CHANGE, query: 'status command output flags' }), 'with a query'],
    ['explain', () => ({ pattern: shortId })],
    ['landings', () => ({ query: 'status command' })],
    ['remember', (i) => ({ type: 'learned', content: `bench note ${i}: retries need jitter`, bead: 'bench-1' })],
  ];
  for (const [name, args, label] of tools) {
    const named = label ? `${name} ${label}` : name;
    progress(`${named}: ${CALLS} calls`);
    const first = await call(client, name, args(0));
    const times = [];
    for (let i = 1; i <= CALLS; i++) times.push((await call(client, name, args(i))).ms);
    const sorted = [...times].sort((a, b) => a - b);
    const p95 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))];
    const m = median(times);
    const value = `${fmt(m, 1)} ms (p95 ${fmt(p95, 1)} ms)`;
    add(`cairn mcp: ${named}, warm`, value, '≤ 50 ms', m <= 50 ? 'met' : '**missed**', `first call ${fmt(first.ms)} ms`);
  }
  const rss = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${transport.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  add('cairn mcp: server RSS after the calls', `${fmt(rss, 1)} MB`, '—', '—');
  await client.close();
}

async function call(client, name, args) {
  const started = process.hrtime.bigint();
  const r = await client.callTool({ name, arguments: args });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const text = r.content.map((c) => c.text ?? '').join('');
  if (r.isError) fail(`${name} failed: ${text}`);
  return { ms, text };
}

// the report at exactly EVENTS events, and on the big store
function reportCases(big) {
  const dir = makeProject(tempDir('report'));
  progress(`writing a ${fmt(EVENTS)}-event log for the report`);
  const small = Math.ceil(EVENTS / 40);
  const roles = { auditor: Math.ceil(EVENTS / 2), judge: small, sentinel: small, curator: small };
  const eventLog = join(dir, '.cairn', 'events.jsonl');
  writeEventLog(eventLog, { patterns: roles, nowMs: Date.parse(NOW), seed: 5, limit: EVENTS });
  cairn(dir, ['rebuild']);
  waitForBackground(dir);
  const bigLabel = `${fmt(big.events)} events, ${fmt(PATTERNS)} patterns, ${fmt(ENTRIES)} knowledge entries`;
  for (const [label, cwd, events] of [
    [`${fmt(EVENTS)} events`, dir, EVENTS],
    [bigLabel, big.dir, big.events],
  ]) {
    progress(`cairn report: ${label}`);
    const out = join(tempDir('out'), 'report.html');
    const args = [CAIRN, 'report', '--out', out, '--project', PROJECT, '--strict'];
    const check = (res) => res.stdout.trim() === out || fail(`cairn report printed ${res.stdout}`);
    const r = measure({ runs: RUNS, args, cwd, env, check });
    const ok = events === EVENTS ? (r.ms <= 2000 ? 'met' : '**missed**') : '—';
    const page = `page ${fmt(readFileSync(out).length / 1024)} KB`;
    const spread = `min–max ${fmt(r.minMs)}–${fmt(r.maxMs)} ms`;
    const note = `${spread}, CPU ${fmt(r.cpuMs)} ms, peak RSS ${fmt(r.peakRssMb, 1)} MB, ${page}`;
    add(`cairn report, ${label}`, `${fmt(r.ms)} ms`, events === EVENTS ? '≤ 2 s' : '—', ok, note);
  }
}

try {
  const big = bigStore(PATTERNS, ENTRIES);
  await startCase(big.dir);
  await callCases(big.dir);
  reportCases(big);
  const m = machine();
  console.log(`### cairn mcp and cairn report (node bench/mcp.js --runs ${RUNS} --calls ${CALLS})\n`);
  const certs = `NODE_EXTRA_CA_CERTS ${process.env.NODE_EXTRA_CA_CERTS ? 'set' : 'unset'}`;
  const load = `load average ${LOAD_AT_START} at the start, ${m.load} at the end`;
  console.log(`${m.cpu}, ${m.cores} cores, ${m.platform}, Node ${m.node}; ${load}; ${certs}.\n`);
  console.log('| case | measured | target | verdict | notes |\n|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.name} | ${r.value} | ${r.target} | ${r.verdict} | ${r.note} |`);
} finally {
  cleanup();
}

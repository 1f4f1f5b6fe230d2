import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, bench, describe } from 'vitest';
import { removeProject } from '../test/helpers.js';
import { startModelMock, type ModelMock } from '../test/hosts/mock.js';
import { cairn, newProject, runClaude, runCodex, type Project, type Session } from '../test/hosts/session.js';

// What cairn's capture hook costs a shell call, with the real host CLIs (npm run bench:hosts; the
// setup of npm run test:hosts). Each session runs CALLS shell calls, scripted by the model mock; a
// call's cost is the time from the model's request that ran it to the next request (the command,
// the hooks after it, the client's own work), the median over the session, for each hook
// configuration. The figures are printed at the end (bench/README.md: Agent hosts).

const CALLS = 20;
const ordinary = Array.from({ length: CALLS }, () => 'true');
const capturing = Array.from({ length: CALLS }, (_, i) => `bd comments add cairn-${i} "LEARNED: lesson ${i} about the export"`);

type Edit = (settings: { hooks: Record<string, { matcher?: string; hooks: Record<string, unknown>[] }[]> }) => void;

/** A project set up by `cairn init --<host>`, its hook settings then edited (none, other forms). */
function project(host: 'claude' | 'codex', edit: Edit = () => {}): Project {
  const p = newProject();
  const init = cairn(p, ['init', `--${host}`]);
  if (init.code !== 0) throw new Error(init.stderr);
  const file = join(p.root, host === 'claude' ? '.claude/settings.json' : '.codex/hooks.json');
  const settings = JSON.parse(readFileSync(file, 'utf8'));
  edit(settings);
  writeFileSync(file, JSON.stringify(settings));
  return p;
}

const noCapture: Edit = (s) => void delete s.hooks.PostToolUse;
const everyCall: Edit = (s) => {
  const [first] = s.hooks.PostToolUse[0].hooks;
  delete first.if;
  s.hooks.PostToolUse[0].hooks = [first];
};
const asynchronous: Edit = (s) => {
  everyCall(s);
  s.hooks.PostToolUse[0].hooks[0].async = true;
};

const gaps = new Map<string, number[]>();

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

type Run = (p: Project, m: ModelMock) => Promise<Session>;

async function measure(name: string, run: Run, p: Project, commands: string[]): Promise<void> {
  const mock = await startModelMock(commands);
  try {
    const result = await run(p, mock);
    if (result.code !== 0) throw new Error(`${name}: ${result.stderr}`);
    const at = mock.turns().map((r) => r.at);
    gaps.set(name, [...(gaps.get(name) ?? []), ...at.slice(1, -1).map((t, i) => t - at[i])]);
  } finally {
    await mock.close();
    removeProject(dirname(p.root)); // a benchmark runs no afterEach
  }
}

const options = { iterations: 3, warmupIterations: 0, time: 0, warmupTime: 0 };

type Case = [name: string, edit: Edit | undefined, commands: string[]];

/** Each configuration's sessions, the project edited before each (the project is removed after). */
function benchHost(host: 'claude' | 'codex', run: Run, cases: Case[]): void {
  for (const [name, edit, commands] of cases) {
    bench(`${host}: ${name}`, () => measure(`${host}: ${name}`, run, project(host, edit), commands), options);
  }
}

describe('Claude Code: a Bash call with cairn’s capture hook', () => {
  benchHost('claude', runClaude, [
    ['no capture hook', noCapture, ordinary],
    ['synchronous, on every call (no if)', everyCall, ordinary],
    ['as cairn init writes it (synchronous, if: Bash(bd *))', undefined, ordinary],
    ['asynchronous, on every call (before)', asynchronous, ordinary],
    ['as cairn init writes it, a bd comments add each call', undefined, capturing],
    ['no capture hook, a bd comments add each call', noCapture, capturing],
  ]);
});

describe('Codex CLI: a shell call with cairn’s capture hook', () => {
  benchHost('codex', runCodex, [
    ['no capture hook', noCapture, ordinary],
    ['as cairn init writes it (synchronous, every call)', undefined, ordinary],
    ['as cairn init writes it, a bd comments add each call', undefined, capturing],
    ['no capture hook, a bd comments add each call', noCapture, capturing],
  ]);
});

afterAll(() => {
  const rows = [...gaps].map(
    ([name, values]) => `  ${String(Math.round(median(values))).padStart(5)} ms  ${name}   (${values.length} calls)`,
  );
  const title = "median time from a shell call's model request to the next, per hook configuration";
  process.stdout.write(`\n${title}:\n${rows.join('\n')}\n`);
});

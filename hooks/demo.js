#!/usr/bin/env node
// `npm run demo`: cairn on the embedded default (JSONL + SQLite, no server), in a throwaway project.
// Part 1 runs the plan phase of a pipeline four times over fixtures/deliberations: before each run
// the auditor gets a block of its best patterns; after it, the curator's verdict corrects them. The
// block visibly changes: false alarms are penalised until they drop out, checks that hold up under
// evidence-backed passes carry their record. Part 2 keeps the landing of the work as a pattern that
// later work is shown. Part 3 is an agent session through its hooks: a lesson an agent logs with
// `bd comments add` is captured, and the next session starts with it. Every step is a real
// executable, called exactly as a pipeline or a host's hook would call it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const fixtures = join(repo, 'fixtures');
// `npm run demo -- --keep` leaves the project in place, to look around in it with cairn's own commands
const keep = process.argv.includes('--keep');
const project = mkdtempSync(join(tmpdir(), 'cairn-demo-'));
mkdirSync(join(project, '.git'));
const started = Date.now();

let day = 0;
/** Run a cairn executable in the demo project; stdout parsed as JSON when asked for. */
function cairn(name, args, { json = false, input = '' } = {}) {
  const env = {
    ...process.env,
    CAIRN_NOW: new Date(Date.UTC(2026, 10, 1 + day, 9)).toISOString(),
    CAIRN_STRICT: '1',
    CLAUDE_PROJECT_DIR: project,
  };
  const r = spawnSync(process.execPath, [join(repo, 'bin', `${name}.js`), ...args, ...(json ? ['--json'] : [])], {
    cwd: project,
    env,
    input,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`${name} ${args.join(' ')} exited ${r.status}:\n${r.stderr}`);
  return json ? JSON.parse(r.stdout) : r.stdout;
}

const WIDTH = 100;
const short = (text, width = WIDTH) => (text.length > width ? `${text.slice(0, width - 1)}…` : text);
/** A block line as the agent sees it, shortened in the middle so its record stays visible. */
const blockLine = (p) => `${short(p.text, WIDTH - p.record.length - 3)} (${p.record})`;
const heading = (title) => console.log(`\n━━ ${title} ${'━'.repeat(Math.max(3, 96 - title.length))}`);

// The plan phase of each issue/run in the fixtures, in pipeline order.
const index = JSON.parse(readFileSync(join(fixtures, 'deliberations', 'index.json'), 'utf8'));
const runs = index
  .filter((d) => d.phase === 'plan' && d.role === 'auditor')
  .map((auditor) => ({
    auditor,
    curator: index.find((d) => d.phase === 'plan' && d.role === 'curator' && d.issue === auditor.issue && d.run === auditor.run),
  }))
  .filter((r) => r.curator);

const penalisedIn = new Map(); // pattern id → { text, runs }
const everShown = new Map(); // pattern id → text, for every pattern that was ever in a block
let previous = new Map(); // the last block's pattern id → line

try {
  cairn('cairn', ['init', '--quiet']);
  console.log(`cairn demo — a memory that learns, in a throwaway project (${project})`);
  console.log('An auditor agent reviews plans; a curator checks the auditor. Before each run cairn injects the');
  console.log("auditor's best patterns into its prompt; after the run the curator's verdict corrects them.");

  for (const [i, { auditor, curator }] of runs.entries()) {
    const scope = ['--issue', auditor.issue, '--run', auditor.run];
    const context = ['--phase', 'plan', '--files', auditor.files.join(','), '--labels', auditor.labels.join(',')];
    heading(`Run ${i + 1} · ${auditor.issue} ${auditor.run} · day ${day + 1}`);

    const block = cairn('format-patterns', ['--role', 'auditor', ...scope, ...context], { json: true });
    const current = new Map(block.patterns.map((p) => [p.id, blockLine(p)]));
    if (current.size === 0) console.log('Block injected into the auditor: (empty — nothing learned yet)');
    else {
      console.log(`Block injected into the auditor (${current.size} patterns, ${block.tokens} tokens; + new since the last run):`);
      for (const [id, line] of current) console.log(`  ${previous.has(id) ? ' ' : '+'} ${line}`);
    }
    for (const [id, line] of previous) if (!current.has(id)) console.log(`  - dropped: ${line}`);
    for (const p of block.patterns) everShown.set(p.id, p.text);
    previous = current;

    const stored = cairn(
      'store-deliberation',
      ['--role', 'auditor', ...scope, ...context, '--file', join(fixtures, 'deliberations', auditor.file)],
      { json: true },
    );
    cairn('store-deliberation', ['--role', 'curator', ...scope, ...context, '--file', join(fixtures, 'deliberations', curator.file)]);
    const learned = stored.patterns.filter((p) => p.status === 'new').length;
    console.log(`The auditor's deliberation (evidence ${auditor.evidence}): ${stored.patterns.length} patterns in it, ${learned} new.`);

    const feedback = cairn(
      'feedback-loop',
      ['--adversarial-role', 'auditor', '--validator-role', 'curator', ...scope, '--files', auditor.files.join(',')],
      { json: true },
    );
    console.log(
      `The curator's verdict: ${feedback.effective}${feedback.effective === 'PASS' ? ` (the auditor's evidence is ${feedback.evidence})` : ''}`,
    );
    for (const p of feedback.penalised) {
      console.log(`  ✗ dismissed ${p.finding} as a false positive → penalised: ${short(p.text)}`);
      const seen = penalisedIn.get(p.pattern) ?? { text: p.text, runs: 0 };
      penalisedIn.set(p.pattern, { ...seen, runs: seen.runs + 1 });
    }
    for (const id of feedback.deprecated ?? []) console.log(`  ✗ retired (dismissed too often): ${short(penalisedIn.get(id)?.text ?? id)}`);
    if (feedback.reinforced.length > 0)
      console.log(`  ✓ reinforced ${feedback.reinforced.length} pattern(s) the auditor applied: the pass is backed by evidence`);
    if (feedback.aged.length > 0) console.log(`  · ${feedback.aged.length} injected pattern(s) this pass did not confirm are aged a day`);
    if (feedback.gate === 'evidence-too-weak') console.log('  · a pass argued without evidence (L3) reinforces nothing');

    const last = i === runs.length - 1;
    const outcome = cairn(
      'outcome-score',
      [...scope, '--result', 'pass', ...(last ? ['--report', join(fixtures, 'landing', 'land-report.example.json')] : [])],
      { json: true },
    );
    console.log(`Pipeline passed: ${outcome.patterns.length} applied pattern(s) graded once more.`);
    day += 1;
  }

  heading(`After ${runs.length} runs · the block the auditor gets next`);
  const final = cairn('format-patterns', ['--role', 'auditor', '--phase', 'plan'], { json: true });
  const finalIds = new Set(final.patterns.map((p) => p.id));
  for (const p of final.patterns) console.log(`    ${blockLine(p)}`);

  console.log('\nWhat changed:');
  for (const [id, { text, runs: n }] of penalisedIn) {
    if (n < 2) continue;
    const where = finalIds.has(id)
      ? 'still in the block, with its record'
      : everShown.has(id)
        ? 'it was in the block and has dropped out'
        : 'it never reached the block';
    console.log(`  ✓ false alarm: dismissed in ${n} runs → ${where}: "${short(text)}"`);
  }
  const validated = final.patterns.filter((p) => /validated/.test(p.record));
  if (validated.length > 0)
    console.log(
      `  ✓ ${validated.length} pattern(s) now carry their record ("${validated[0].record}"): evidence-backed passes confirmed them`,
    );
  const dropped = [...everShown.keys()].filter((id) => !finalIds.has(id));
  if (dropped.length > 0) console.log(`  ✓ ${dropped.length} pattern(s) once injected are out of the block now`);

  heading('Landing patterns · how the work was done, for the next piece of work');
  const [landing] = cairn('cairn', ['patterns'], { json: true }).patterns;
  console.log(`The last run passed with a landing report: captured "${landing.title}"`);
  console.log(`  files ${landing.example_paths.length}, tags ${landing.tags.join(', ')}, run: ${landing.commands.join('; ')}`);
  const next = cairn('format-patterns', ['--role', 'auditor', '--query', 'clinic command center web shell'], {
    json: true,
  });
  console.log('A later block for related work (format-patterns --query …) ends with:');
  for (const line of next.landing) console.log(`    ${short(line)}`);

  heading('Memory across sessions · a Claude Code session, through its hooks');
  const hosts = cairn('cairn', ['init', '--claude'], { json: true }).hooks[0];
  console.log(
    `cairn init --claude added ${[...new Set(hosts.added)].join(' and ')} hooks to .claude/settings.json. Claude Code runs them:`,
  );
  const hookPayload = (fixture, extra) =>
    JSON.stringify({ ...JSON.parse(readFileSync(join(fixtures, 'hooks', fixture), 'utf8')), cwd: project, ...extra });
  const context = (stdout) => (stdout.trim() ? JSON.parse(stdout).hookSpecificOutput.additionalContext.trimEnd() : '(nothing)');
  const indent = (text) =>
    text
      .split('\n')
      .map((l) => `    ${short(l, 120)}`)
      .join('\n');
  console.log(
    `Session 1 starts → auto-recall injects: ${context(cairn('auto-recall', ['--format', 'claude'], { input: hookPayload('claude-session-start.json') }))}`,
  );
  const bash = JSON.parse(hookPayload('claude-post-tool-use-bash.json'));
  console.log(`The agent runs: ${short(bash.tool_input.command, 96)}`);
  cairn('memory-capture', [], { input: JSON.stringify(bash) });
  const [entry] = readFileSync(join(project, '.cairn', 'memory', 'knowledge.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  console.log(`  → memory-capture keeps it in .cairn/memory/knowledge.jsonl as ${entry.key}`);
  day += 1;
  console.log('Session 2 starts → auto-recall injects:');
  console.log(
    indent(
      context(
        cairn('auto-recall', ['--format', 'claude'], {
          input: hookPayload('claude-session-start.json', { session_id: 'session-2' }),
        }),
      ),
    ),
  );
  const prompt = 'Add OAuth login to the clinic web shell';
  console.log(`The user asks "${prompt}" → auto-recall (UserPromptSubmit) finds, by relevance:`);
  const asked = cairn('auto-recall', ['--format', 'claude'], {
    input: hookPayload('claude-user-prompt-submit.json', { prompt }),
  });
  console.log(
    indent(
      context(asked)
        .split('\n')
        .filter((l) => l.startsWith('- ') || l.startsWith('Pattern:'))
        .join('\n'),
    ),
  );

  heading('Done');
  console.log(
    `${runs.length} pipeline runs, a landing and two sessions in ${((Date.now() - started) / 1000).toFixed(1)} s. Everything cairn kept is in .cairn/:`,
  );
  console.log('events.jsonl, memory/knowledge.jsonl and landings.jsonl are what a team commits;');
  console.log('cache/state.db is rebuilt from them.');
  if (keep) {
    console.log(`\nThe project is kept in ${project}. Look around: cd there, then`);
    console.log(`  ${join(repo, 'bin', 'cairn.js')} list          (or explain <id>, events, recall oauth, doctor,`);
    console.log('  report --open)');
  } else console.log('The throwaway project is deleted now; npm run demo -- --keep keeps it to look around in.');
} finally {
  if (!keep) rmSync(project, { recursive: true, force: true });
}

import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Command } from '../lib/cli/runner.js';
import { eventFollower, patternDb } from '../lib/events/log.js';
import { knowledgeFollowers } from '../lib/knowledge/index.js';
import { hookChecks } from '../lib/hosts/check.js';
import { mcpCheck, MCP_HOSTS, registeredServer, type ServerCommand } from '../lib/hosts/mcp.js';
import { landingLogPath, libraryCheck, libraryPath } from '../lib/landing/library.js';
import { committedLogs, secretsCheck } from '../lib/store/scrub.js';
import { DEFAULT_CONFIG, loadConfig } from '../lib/store/config.js';
import { configCheck, databaseChecks, deferredCheck, healthCheck, maintenanceCheck } from '../lib/store/doctor.js';
import { moduleChecks, projectIdCheck, roleCheck, storeLayoutChecks } from '../lib/store/doctor.js';
import { storedRoles } from '../lib/patterns/queries.js';
import { clearHealth, readHealth, type Check } from '../lib/store/health.js';

export const command: Command = {
  name: 'doctor',
  usage: `usage: cairn doctor [--clear] [--json]

Checks that cairn works here: the store and its settings, better-sqlite3 and tiktoken load,
the database is sound and each log is applied to it, no fail-open error was recorded since
the last clear, the nightly cairn maintain runs, the landing patterns read, how many lines of
the committed logs hold secrets (cairn scrub redacts them), which agent hosts run cairn's hooks
(and whether their commands are found), and which register cairn mcp — whose server it then
starts as a host would, to see it answer initialize and tools/list within 10 s. Exits 1 when
something is wrong (a warning is not).

  --clear   forget the recorded errors (after fixing their cause); errors.log keeps them
  --json    {ok, checks:[{name, status: ok|warn|fail|off, detail}]}

example:
  cairn doctor
`,
  flags: { boolean: ['clear'] },
  deadlineMs: 0,
  person: true,
  async run(ctx) {
    const loc = ctx.location();
    const exists = isDirectory(loc.dir);
    const checks: Check[] = [
      exists
        ? { name: 'store', status: 'ok', detail: `${loc.dir} (project ${loc.project})` }
        : { name: 'store', status: 'fail', detail: noStore(loc.dir) },
    ];
    const layout = exists ? storeLayoutChecks(loc.dir) : [];
    if (exists) checks.push(...layout, configCheck(loc.dir), projectIdCheck(loc));
    checks.push(...moduleChecks(exists ? encoding(loc.dir) : DEFAULT_CONFIG.tokenizer.encoding));
    if (exists) {
      const store = ctx.store();
      const knowledge = knowledgeFollowers(store);
      // what the layout checks failed is not read again here (a directory for a log reads as "0 of 4096 bytes applied")
      const broken = new Set(layout.filter((c) => c.status === 'fail').map((c) => join(loc.dir, c.name)));
      const logs = [
        {
          follower: eventFollower(store),
          catchUp: 'the next pipeline command applies the rest (cairn rebuild replays it all now)',
        },
        { follower: knowledge.log, catchUp: 'the next session start or cairn recall applies the rest' },
        { follower: knowledge.archive, catchUp: 'the next cairn recall --all applies the rest' },
        {
          follower: knowledge.active,
          catchUp: 'auto-recall applies it while the cache matches the log, else reads the log (cairn sanitize refreshes the cache)',
        },
      ].filter(({ follower }) => !broken.has(follower.path) && !broken.has(dirname(follower.path)));
      if (!broken.has(dirname(store.dbPath))) checks.push(...databaseChecks(store.dbPath, logs));
      // the roles live in the pattern index: read only through a driver that loads, from a database that
      // checked sound (doctor never moves one aside)
      if (['better-sqlite3', 'database'].every((name) => checks.find((c) => c.name === name)?.status === 'ok')) {
        checks.push(roleCheck(store.config, () => storedRoles(patternDb(store), store.project)));
      }
      checks.push(deferredCheck(loc.dir), maintenanceCheck(loc.dir, store.eventsPath), libraryCheck(loc.dir));
      checks.push(secretsCheck(committedLogs(store, { log: landingLogPath(loc.dir), library: libraryPath(loc.dir) }), loc.dir));
      const health = ctx.args.clear ? readHealth(loc.dir) : null;
      if (health) {
        clearHealth(loc.dir);
        checks.push({
          name: 'health',
          status: 'ok',
          detail: `cleared ${health.errors} error(s) recorded since ${health.degraded_since}`,
        });
      } else checks.push(healthCheck(loc.dir));
    }
    checks.push(...hookChecks(loc.root), ...(await mcpChecks(loc.root)));
    const failed = checks.filter((c) => c.status === 'fail').length;
    if (ctx.args.json) ctx.json({ ok: failed === 0, checks });
    else {
      const width = Math.max(...checks.map((c) => c.name.length));
      const lines = checks.map((c) => `  ${c.status.padEnd(4)}  ${c.name.padEnd(width)}  ${c.detail}`);
      ctx.print(`${lines.join('\n')}\n${failed === 0 ? 'No problems found.' : `${failed} problem(s) found.`}\n`);
    }
    return failed === 0 ? 0 : 1;
  },
};

/**
 * The hosts that register cairn mcp, and one start of each server command they register (most
 * register the same); a single line when none does.
 */
async function mcpChecks(root: string): Promise<Check[]> {
  const registered = MCP_HOSTS.map((host) => ({ check: mcpCheck(root, host), server: registeredServer(root, host) }));
  const found = registered.filter((r) => r.check.status !== 'off');
  const none: Check = { name: 'mcp', status: 'off', detail: 'no host registers cairn mcp (cairn init --mcp)' };
  if (found.length === 0) return [none];
  const commands = new Map<string, ServerCommand>();
  for (const { check, server } of found) {
    const usable = check.status === 'ok' && typeof server === 'object' && !('problem' in server);
    if (usable) commands.set(JSON.stringify(server), server);
  }
  const checks = found.map((r) => r.check);
  if (commands.size === 0) return checks;
  // the SDK's client, loaded only when there is a server to start
  const { probeServer } = await import('../lib/hosts/mcp-probe.js');
  for (const server of commands.values()) checks.push(await probeServer(root, server));
  return checks;
}

/** No store here, or something else where it should be. */
function noStore(dir: string): string {
  try {
    statSync(dir);
  } catch {
    return `no store at ${dir} (cairn init)`;
  }
  return `${dir} is not a directory: move it away, then cairn init`;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function encoding(dir: string): string {
  try {
    return loadConfig(dir).tokenizer.encoding;
  } catch {
    return DEFAULT_CONFIG.tokenizer.encoding;
  }
}

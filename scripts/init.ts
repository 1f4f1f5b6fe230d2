import { basename, join, relative } from 'node:path';
import type { Command } from '../lib/cli/runner.js';
import { existsSync } from 'node:fs';
import { CairnError, describeError } from '../lib/core/errors.js';
import { projectIdStatus } from '../lib/store/root.js';
import { initStore, recordProjectId } from '../lib/store/init.js';
import { hookCheck } from '../lib/hosts/check.js';
import { cronLines } from '../lib/hosts/cron.js';
import { CONFIGURABLE_HOSTS, HOST_HOOKS, type ConfigurableHost } from '../lib/hosts/registry.js';
import { commandProgram, gitTopLevel, installHooks, type HookEntry } from '../lib/hosts/settings.js';
import { importLavraLog, type ImportReport } from '../lib/knowledge/capture.js';
import { optionalString } from '../lib/cli/flags.js';
import { commandLinePath } from '../lib/cli/input.js';
import { MCP_CONFIGS, MCP_HOSTS, mcpHostsFound, registerMcp, type McpHost } from '../lib/hosts/mcp.js';

interface McpResult {
  host: McpHost;
  path: string;
  added: boolean;
  error: string | null;
}

interface HostResult {
  host: ConfigurableHost;
  path: string;
  added: HookEntry[];
  /** cairn's outdated handlers replaced by `added` ones, with why. */
  replaced: { event: string; reason: string }[];
  /** Why the settings file was left as it is (the other hosts are still set up). */
  error: string | null;
  /** The hooks are in place but will not run (the host would not find their program, or does not trust them yet). */
  warning: string | null;
  /** What the user may still need to do on the host's side (the check's warning). */
  advice: string | null;
}

export const command: Command = {
  name: 'init',
  usage: `usage: cairn init [--claude] [--codex] [--gemini] [--cursor] [--mcp [--opencode]] [--import-lavra PATH]
                  [--root DIR] [--dir DIR] [--json]

Creates the store (.cairn/ at the project root, or --dir) with a .gitignore for derived files
and a .gitattributes that merges the committed JSONL logs by union. Existing lines are kept.

  --claude   hooks in .claude/settings.json: SessionStart → auto-recall,
             PostToolUse (Bash, for commands that run bd) → memory-capture
  --codex    .codex/hooks.json: SessionStart → auto-recall, PostToolUse (Bash) → memory-capture
             (Codex runs them once you trust the project and the hooks; init says what is missing)
  --gemini   .gemini/settings.json: SessionStart → auto-recall, AfterTool (run_shell_command) → memory-capture
  --cursor   .cursor/hooks.json: sessionStart → auto-recall, afterShellExecution → memory-capture
  --mcp      also register the MCP server (cairn mcp) with the hosts named — Claude Code .mcp.json,
             Codex .codex/config.toml, Gemini CLI .gemini/settings.json, Cursor .cursor/mcp.json,
             OpenCode opencode.json (--opencode) — or, with no host named, with every host the
             project shows it uses (.claude/, .codex/, .gemini/, .cursor/, opencode.json, …)
  --import-lavra PATH   add the entries of an existing Lavra knowledge log (.beads/memory/knowledge.jsonl),
                        cleaned as a capture is; entries already in the log are not added again

A host's other hooks, servers and settings are kept; running init again changes nothing but a hook
of cairn's that an earlier cairn wrote and that no longer works (it is replaced). A settings
file that does not read is left as it is, and the other hosts are still set up. Prints what
it did, whether the hooks' programs are found, what to commit, and the cron lines.

example:
  cd my-repo && npx cairn init --claude && git add .cairn .claude/settings.json
`,
  flags: { boolean: [...CONFIGURABLE_HOSTS, 'opencode', 'mcp'], string: ['import-lavra'] },
  deadlineMs: 0,
  person: true,
  run(ctx) {
    const loc = ctx.location();
    // a log to import that is not there is a mistake in the command, said before anything is set up (the reader takes a
    // missing log as empty)
    const lavra = optionalString(ctx.args, 'import-lavra');
    const lavraPath = lavra === null ? null : commandLinePath(lavra, loc.root, `--import-lavra ${lavra}`);
    if (lavraPath !== null && !existsSync(lavraPath))
      throw new CairnError(
        'input',
        `--import-lavra ${lavra}: no such file (the Lavra log is usually .beads/memory/knowledge.jsonl); nothing was set up`,
      );
    if (ctx.args.opencode && !ctx.args.mcp) {
      const how = 'as a plugin (hooks/opencode/cairn.js) and as an MCP server: cairn init --opencode --mcp';
      throw new CairnError('usage', `OpenCode takes cairn ${how}`);
    }
    const store = initStore(loc.dir);
    recordProjectId(loc);
    const id = projectIdStatus(loc);
    if (id.mismatch)
      ctx.log.warn(
        `the recorded project id ${id.recorded} differs from the one derived here (${id.derived}: the directory moved ` +
          `or the remote changed); the recorded one is kept`,
      );
    // a store outside the project (--dir) is named in the hooks and cron lines, which would otherwise use .cairn/
    const storeDir = loc.ownStore ? undefined : loc.dir;
    const hosts = CONFIGURABLE_HOSTS.filter((h) => ctx.args[h]).map((host) => setUpHost(loc.root, host, storeDir));
    for (const h of hosts) if (h.error) ctx.log.warn(`${h.host}: ${h.error}`);
    const named = MCP_HOSTS.filter((h) => ctx.args[h]);
    const mcpHosts = !ctx.args.mcp ? [] : named.length > 0 ? named : mcpHostsFound(loc.root);
    if (ctx.args.mcp && mcpHosts.length === 0) {
      const others = MCP_HOSTS.slice(1)
        .map((h) => `--${h}`)
        .join(', ');
      const name = `name one: cairn init --mcp --claude (or ${others})`;
      ctx.log.warn(`no agent host found here to register cairn mcp with; ${name}`);
    }
    const servers = mcpHosts.map((host) => setUpMcp(loc.root, host, storeDir));
    for (const m of servers) if (m.error) ctx.log.warn(`${m.host} (mcp): ${m.error}`);
    const importing = (path: string) => importLavraLog(ctx.store(), path, ctx.progress('importing entries'));
    const imported: ImportReport | null = lavraPath === null ? null : importing(lavraPath);
    const inRoot = (path: string) => {
      const rel = relative(loc.root, path);
      return rel === '' || rel.startsWith('..') ? null : rel;
    };
    const git = gitTopLevel(loc.root) !== null;
    const written = [...hosts, ...servers].filter((h) => !h.error).map((h) => inRoot(h.path));
    const toCommit = [...new Set([inRoot(loc.dir), ...written])].filter((p): p is string => p !== null);
    const commit = git && toCommit.length > 0 ? `git add ${toCommit.join(' ')} && git commit -m "Set up cairn"` : null;
    const cron = cronLines(loc.root, { storeDir });
    // fail open like every command (SPEC §2): a host left as it was is a warning, exit 1 only under --strict
    const code = ctx.strict && [...hosts, ...servers].some((h) => h.error) ? 1 : 0;
    if (ctx.args.json) {
      ctx.json({
        root: loc.root,
        dir: loc.dir,
        project: loc.project,
        created: store.created,
        added: store.added,
        hooks: hosts.map((h) => ({
          host: h.host,
          file: h.path,
          added: h.added.map((e) => e.event),
          replaced: h.replaced,
          error: h.error,
          warning: h.warning,
        })),
        mcp: servers.map((m) => ({ host: m.host, file: m.path, added: m.added, error: m.error })),
        imported,
        commit,
        cron,
      });
      return code;
    }
    if (ctx.args.quiet) return code;
    const lines = [`cairn is set up in ${loc.root} (project ${loc.project})`, ''];
    lines.push(
      `  store   ${inRoot(loc.dir) ?? loc.dir}/ ` +
        `${store.created ? 'created' : store.added.length > 0 ? `updated (${store.added.join('; ')})` : 'already there'}`,
    );
    for (const h of hosts) {
      const file = inRoot(h.path) ?? h.path;
      if (h.error) {
        lines.push(`  ${h.host.padEnd(7)} not set up: ${h.error}; fix it, then cairn init --${h.host} again`);
        continue;
      }
      const named = h.added.map((e) => {
        const program = basename(commandProgram(e.handler.command));
        return `${e.event}${e.matcher ? ` (${e.matcher})` : ''} → ${program}`;
      });
      const added = [...new Set(named)];
      lines.push(`  ${h.host.padEnd(7)} ${file}: ${added.length > 0 ? added.join(', ') : 'already set up'}`);
      for (const r of h.replaced) {
        lines.push(`          replaced the ${r.event} hook an earlier cairn wrote: it ${r.reason}`);
      }
      if (h.warning) lines.push(`          ! ${h.warning}`);
      else if (h.advice) lines.push(`          ${h.advice}`);
      else if (HOST_HOOKS[h.host].note) lines.push(`          ${HOST_HOOKS[h.host].note}`);
    }
    for (const m of servers) {
      const file = inRoot(m.path) ?? m.path;
      const again = `fix it, then cairn init --${m.host} --mcp again`;
      if (m.error) lines.push(`  mcp     ${m.host}: not registered: ${m.error}; ${again}`);
      else {
        lines.push(`  mcp     ${file}: ${m.added ? 'cairn mcp registered' : 'already registered'}`);
        if (MCP_CONFIGS[m.host].note) lines.push(`          ${MCP_CONFIGS[m.host].note}`);
      }
    }
    if (imported && lavra) {
      const skipped = [
        imported.duplicates && `${imported.duplicates} already there`,
        imported.unreadable && `${imported.unreadable} unreadable line(s) skipped`,
      ].filter(Boolean);
      lines.push(
        `  lavra   ${imported.appended} knowledge entries imported from ${lavra}${skipped.length ? ` (${skipped.join(', ')})` : ''}`,
      );
    }
    if (commit && inRoot(loc.dir) === null)
      lines.push('', `Commit the hooks (the store ${loc.dir} is outside this repository: not shared through it):`, `  ${commit}`);
    else if (commit) lines.push('', 'Commit it (the logs are shared through git; the cache stays local):', `  ${commit}`);
    else if (!git) lines.push('', 'Not a git repository: memory is shared through git, so git init here and commit .cairn/ to share it.');
    lines.push('', 'Nightly maintenance (crontab -e):', ...cron.map((l) => `  ${l}`), '');
    const ready = hosts.filter((h) => !h.error);
    const serving = servers.filter((m) => !m.error);
    lines.push(
      ready.length > 0
        ? `Next: start a ${ready.map((h) => h.host).join(' / ')} session here; auto-recall brings in what the project has learned.`
        : serving.length > 0
          ? `Next: start a ${serving.map((m) => m.host).join(' / ')} session here; its agent can ask cairn mcp.`
          : 'Next: cairn init --claude (or --codex, --gemini, --cursor) to give an agent host this memory, ' +
            'or run a pipeline (README: The loop in a pipeline).',
    );
    ctx.print(lines.join('\n') + '\n');
    return code;
  },
};

/** Register cairn mcp in one host's MCP file; one that does not read is left as it is (the others are still set up). */
function setUpMcp(root: string, host: McpHost, storeDir: string | undefined): McpResult {
  try {
    return { host, ...registerMcp(root, host, storeDir), error: null };
  } catch (err) {
    return { host, path: join(root, MCP_CONFIGS[host].file), added: false, error: describeError(err) };
  }
}

/** Merge cairn's hooks into one host's settings, then check that the host would find their programs. */
function setUpHost(root: string, host: ConfigurableHost, storeDir: string | undefined): HostResult {
  const hooks = HOST_HOOKS[host];
  try {
    const { path, added, replaced } = installHooks(root, hooks, storeDir);
    const check = hookCheck(root, host);
    const detail = check.detail.replace(`${hooks.file}: `, '');
    const warning = check.status === 'fail' ? detail : null;
    return { host, path, added, replaced, error: null, warning, advice: check.status === 'warn' ? detail : null };
  } catch (err) {
    const error = describeError(err);
    return { host, path: join(root, hooks.file), added: [], replaced: [], error, warning: null, advice: null };
  }
}

import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import type { Command } from '../lib/cli/runner.js';
import { optionalString } from '../lib/cli/flags.js';
import { commandLinePath } from '../lib/cli/input.js';
import { writeFileAtomic } from '../lib/io/atomic.js';
import { gatherReport } from '../lib/report/data.js';
import { renderReport } from '../lib/report/html.js';

export const command: Command = {
  name: 'report',
  usage: `usage: cairn report [--out FILE] [--open] [--json]

Writes one HTML page of what cairn learned in this project (.cairn/cache/report.html, or --out),
and prints its path. Per reviewing role: the block it gets now, how many of the lines it was given
validators kept and dismissed, run by run (the learning curve), and the patterns that left its
block and why (deprecated, obsolete, dismissed, decayed); the top patterns with their record and
evidence over time; knowledge by type and tag, the newest entries and what the sanitiser removed;
the landing patterns. The page is self-contained — inline CSS and SVG, no script, nothing fetched —
and every text on it is shown as text (sanitised, secrets redacted, escaped).

  --out FILE  write the page there instead
  --open      then open it with the system's opener (xdg-open, open); without one, the path is printed
  --json      {path, bytes, events, roles, ms}

example:
  cairn report --open
`,
  flags: { string: ['out'], boolean: ['open'] },
  deadlineMs: 0,
  async run(ctx) {
    const started = Date.now();
    const store = ctx.store();
    const out = optionalString(ctx.args, 'out');
    const inStore = join(store.dir, 'cache', 'report.html');
    const path = out === null ? inStore : commandLinePath(out, store.location.root, `--out ${out}`);
    const data = gatherReport(store, ctx.progress('reading events', { bytes: true }));
    const html = renderReport(data);
    // into the store (never through a link in it), or where --out names
    writeFileAtomic(path, html, out === null ? store.dir : dirname(path));
    if (ctx.args.open) await openInBrowser(path, (m) => ctx.log.warn(m));
    const roles = data.roles.map((r) => r.role);
    const bytes = Buffer.byteLength(html);
    if (ctx.args.json) ctx.json({ path, bytes, events: data.events, roles, ms: Date.now() - started });
    else ctx.print(path + '\n');
  },
};

/** Open the page with the platform's opener, detached; a system without one gets a warning, not an error. */
function openInBrowser(path: string, warn: (m: string) => void): Promise<void> {
  const openers: Record<string, string[]> = { darwin: ['open', path], win32: ['cmd', '/c', 'start', '""', path] };
  const [command, ...args] = openers[process.platform] ?? ['xdg-open', path];
  return new Promise((resolve) => {
    const child = spawn(command, args, { detached: true, stdio: 'ignore' });
    child.once('error', (err) => {
      const why = (err as NodeJS.ErrnoException).code ?? err.message;
      warn(`cannot open the page (${command}: ${why}); open ${path} in a browser`);
      resolve();
    });
    child.once('spawn', () => {
      child.unref();
      resolve();
    });
  });
}

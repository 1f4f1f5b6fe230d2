// Build step after tsc: one self-contained file per command in dist/bin/, so each executable starts by
// loading one file instead of some thirty (start-up is most of a hook's time).
//
// The bundles are CommonJS (`.cjs`, run by the CommonJS shims in bin/ through load.cjs, which keeps a
// code cache for each): Node's ES module loader alone costs a hook about a fifth of `node -e 0`, and in
// CommonJS a module reached only through `import()` — internal or built in — is evaluated when it is
// first needed rather than at start-up, so a command pays for the code paths it takes.
// better-sqlite3's JavaScript is bundled too (a dozen files resolved and compiled at every start
// otherwise); its native addon and tiktoken stay outside and are loaded only on the code paths that
// need them.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = (...parts) => JSON.stringify(join(root, 'dist', ...parts));
const commands = readdirSync(join(root, 'dist', 'scripts'))
  .filter((f) => f.endsWith('.js'))
  .map((f) => f.slice(0, -3));

const entries = {
  // `cairn <name>` loads the named command's own bundle, beside this one, when it is asked for.
  cairn: `import { cairn } from ${dist('lib', 'cli', 'runner.js')};
export const run = (argv) => cairn(argv, async (name, rest) => require(__dirname + '/load.cjs')(name).run(rest));`,
};
for (const name of commands) {
  entries[name] = `import { main } from ${dist('lib', 'cli', 'runner.js')};
import { command } from ${dist('scripts', `${name}.js`)};
export const run = (argv) => main(command, argv);`;
}
// memory-capture runs after every shell command an agent makes (SPEC §4.2). Its bundle holds only the
// gate that reads the payload; the runner and the capture path, a file beside it, are loaded only when
// the command may add a bd comment.
entries['memory-capture.run'] = `import { main } from ${dist('lib', 'cli', 'runner.js')};
import { command } from ${dist('scripts', 'memory-capture.js')};
export const run = (argv, passed) => main(command, argv, passed);`;
entries['memory-capture'] = `import { hookGate } from ${dist('lib', 'cli', 'gate.js')};
import { HOOK_DEADLINE_MS } from ${dist('lib', 'core', 'deadline.js')};
import { mayCapture } from ${dist('lib', 'knowledge', 'bd-command.js')};
export const run = async (argv) => {
  const passed = await hookGate(argv, HOOK_DEADLINE_MS, mayCapture, true); // a capture is kept with its payload, whatever the deadline
  if (passed) await require(__dirname + '/load.cjs')('memory-capture.run').run(argv, passed);
};`;

// auto-recall starts a session, and bd (SPEC §4.4) is most of its wait: its gate reads the payload and
// starts the bd listings before the runner and the index code are loaded.
entries['auto-recall.run'] = `import { main } from ${dist('lib', 'cli', 'runner.js')};
import { command } from ${dist('scripts', 'auto-recall.js')};
export const run = (argv, passed) => main(command, argv, passed);`;
entries['auto-recall'] = `import { hookGate, storeFlags } from ${dist('lib', 'cli', 'gate.js')};
import { HOOK_DEADLINE_MS } from ${dist('lib', 'core', 'deadline.js')};
import { earlyBeadListing } from ${dist('lib', 'knowledge', 'beads.js')};
export const run = async (argv) => {
  let input;
  const passed = await hookGate(argv, HOOK_DEADLINE_MS, (payload) => ((input = payload), true));
  const flags = storeFlags(argv);
  if (input && flags) passed.beads = earlyBeadListing(flags, input, passed.deadline);
  await require(__dirname + '/load.cjs')('auto-recall.run').run(argv, passed);
};`;

mkdirSync(join(root, 'dist', 'bin'), { recursive: true });
copyFileSync(join(root, 'tools', 'load.cjs'), join(root, 'dist', 'bin', 'load.cjs'));
await Promise.all(
  Object.entries(entries).map(([name, contents]) =>
    build({
      stdin: { contents, resolveDir: root, sourcefile: `${name}-entry.js` },
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      // import() becomes a require() run when it is reached, for internal and built-in modules alike
      supported: { 'dynamic-import': false },
      // the modules find their package (version, native addons) from where the bundle is
      banner: { js: 'const __bundle_url = require("node:url").pathToFileURL(__filename).href;' },
      define: { 'import.meta.url': '__bundle_url' },
      external: ['tiktoken', 'bindings'],
      outfile: join(root, 'dist', 'bin', `${name}.cjs`),
      logLevel: 'warning',
    }),
  ),
);

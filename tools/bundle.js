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
const scripts = readdirSync(join(root, 'dist', 'scripts')).filter((f) => f.endsWith('.js'));
const GATE = '.gate.js';
const commands = scripts.filter((f) => !f.endsWith(GATE)).map((f) => f.slice(0, -3));
const gated = new Set(scripts.filter((f) => f.endsWith(GATE)).map((f) => f.slice(0, -GATE.length)));

const entries = {
  // `cairn <name>` loads the named command's own bundle, beside this one, when it is asked for.
  cairn: `import { cairn } from ${dist('lib', 'cli', 'runner.js')};
export const run = (argv) => cairn(argv, async (name, rest) => require(__dirname + '/load.cjs')(name).run(rest));`,
};
// A command with a gate (scripts/<name>.gate.ts: a hook's hot path) is two bundles: <name>, the gate
// alone, and <name>.run, the runner and the command, a file beside it loaded only when the gate passes.
for (const name of commands) {
  const bundle = gated.has(name) ? `${name}.run` : name;
  entries[bundle] = `import { main } from ${dist('lib', 'cli', 'runner.js')};
import { command } from ${dist('scripts', `${name}.js`)};
export const run = (argv, passed) => main(command, argv, passed);`;
  if (!gated.has(name)) continue;
  entries[name] = `import { gate } from ${dist('scripts', `${name}${GATE}`)};
export const run = async (argv) => {
  const passed = await gate(argv);
  if (passed) await require(__dirname + '/load.cjs')(${JSON.stringify(bundle)}).run(argv, passed);
};`;
}

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

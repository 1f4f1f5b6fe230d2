// Build step after tsc: one self-contained file per command in dist/bin/, so each executable starts by
// loading one module instead of some thirty (start-up is most of a hook's time). Heavy native or
// WASM packages stay outside and are still loaded only on the code paths that need them.
import { build } from 'esbuild';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = JSON.stringify(join(root, 'dist', 'lib', 'cli', 'runner.js'));
const commands = readdirSync(join(root, 'dist', 'scripts'))
  .filter((f) => f.endsWith('.js'))
  .map((f) => f.slice(0, -3));

const entries = {
  // `cairn <name>` loads the named command's own bundle, beside this one, when it is asked for.
  cairn: `import { cairn } from ${cli};
export const run = (argv) => cairn(argv, async (name, rest) => (await import(new URL(\`./\${name}.js\`, import.meta.url).href)).run(rest));`,
};
for (const name of commands) {
  entries[name] = `import { main } from ${cli};
import { command } from ${JSON.stringify(join(root, 'dist', 'scripts', `${name}.js`))};
export const run = (argv) => main(command, argv);`;
}

await Promise.all(
  Object.entries(entries).map(([name, contents]) =>
    build({
      stdin: { contents, resolveDir: root, sourcefile: `${name}-entry.js` },
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      external: ['better-sqlite3', 'tiktoken'],
      outfile: join(root, 'dist', 'bin', `${name}.js`),
      logLevel: 'warning',
    }),
  ),
);

import { existsSync } from 'node:fs';
import { readSmallFile } from '../io/read.js';
import { join } from 'node:path';
import type { LandingReport } from './report.js';
import { unique } from './report.js';

// The commands similar work should run (SPEC §5): the report's, package.json's, the structure's; never an absolute path.

export const MAX_COMMANDS = 10;

const VALIDATING = /\b(test|tests|build|lint|check|typecheck|vet|clippy|pytest|vitest|jest|tsc|mypy|ruff|eslint)\b/;
const ABSOLUTE_PATH = /(^|[\s='"])(\/|~\/|[A-Za-z]:\\)/;

export function landingCommands(report: LandingReport, root: string): string[] {
  const ran = report.commandsRun.filter((c) => !/^git\s/.test(c) && VALIDATING.test(c));
  return unique([...(report.validationCommand ? [report.validationCommand] : []), ...ran, ...projectCommands(root)])
    .filter((c) => !ABSOLUTE_PATH.test(c))
    .slice(0, MAX_COMMANDS);
}

export function projectCommands(root: string): string[] {
  const out: string[] = [];
  const scripts = packageScripts(root);
  const pm = existsSync(join(root, 'pnpm-lock.yaml'))
    ? 'pnpm'
    : existsSync(join(root, 'yarn.lock'))
      ? 'yarn'
      : existsSync(join(root, 'bun.lockb'))
        ? 'bun'
        : 'npm';
  if (scripts.has('test')) out.push(`${pm} test`);
  for (const name of ['build', 'lint']) if (scripts.has(name)) out.push(`${pm} run ${name}`);
  if (existsSync(join(root, 'go.mod'))) out.push('go test ./...');
  if (existsSync(join(root, 'Cargo.toml'))) out.push('cargo test');
  if (usesPytest(root)) out.push('pytest');
  return out;
}

function packageScripts(root: string): Set<string> {
  try {
    const scripts = JSON.parse(projectFile(root, 'package.json') ?? 'null')?.scripts;
    return new Set(scripts && typeof scripts === 'object' ? Object.keys(scripts).filter((k) => typeof scripts[k] === 'string') : []);
  } catch {
    return new Set();
  }
}

/** Read bounded (it could be a link to a device, a huge file); undefined when absent or unreadable. */
function projectFile(root: string, name: string): string | undefined {
  try {
    return readSmallFile(join(root, name), PROJECT_FILE_CAP)?.toString('utf8');
  } catch {
    return undefined;
  }
}

const PROJECT_FILE_CAP = 1024 * 1024;

function usesPytest(root: string): boolean {
  if (existsSync(join(root, 'pytest.ini')) || existsSync(join(root, 'conftest.py'))) return true;
  for (const [file, mark] of [
    ['pyproject.toml', /\[tool\.pytest|pytest/],
    ['setup.cfg', /\[tool:pytest\]/],
    ['tox.ini', /\[pytest\]/],
  ] as const) {
    try {
      if (mark.test(projectFile(root, file) ?? '')) return true;
    } catch {
      // no such file
    }
  }
  return false;
}

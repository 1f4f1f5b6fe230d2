import { describe, it, expect } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { currentBranch, locate } from '../lib/store/root.js';
import { lastErrors } from '../lib/store/health.js';
import { landingCommands } from '../lib/landing/commands.js';
import { readSettings } from '../lib/hosts/settings.js';
import { compactArtifacts } from '../lib/store/artifacts.js';
import { applyProposal } from '../lib/knowledge/curate.js';
import { openTestStore, tempProject } from './helpers.js';

// Every read of a file cairn did not write itself is bounded (issue 7): a FIFO, a device or a link
// to one in the place of a git file, a project's package.json, a host's settings, an artifact or a
// curation proposal must never hang a run or read without end. A hang here is a test timeout.

function fifo(path: string): string {
  expect(spawnSync('mkfifo', [path]).status).toBe(0);
  return path;
}

const report = {
  title: 'Add --json to status',
  summary: '',
  prompt: null,
  missionId: null,
  reportId: null,
  paths: ['src/cli/status.ts'],
  validationCommand: null,
  commandsRun: [],
};

describe('files in the way', () => {
  it('git files that are FIFOs: no branch and a derived id, at once', () => {
    const root = tempProject({ init: false });
    fifo(join(root, '.git', 'HEAD'));
    fifo(join(root, '.git', 'config'));
    expect(currentBranch(root)).toBeUndefined();
    expect(locate({ root }, {}).projectFrom).toBe('derived');
  });

  it('a project whose package.json and pyproject.toml are a FIFO and /dev/zero: no commands from them', () => {
    const root = tempProject({ init: false });
    fifo(join(root, 'package.json'));
    symlinkSync('/dev/zero', join(root, 'pyproject.toml'));
    expect(landingCommands(report, root)).toEqual([]);
  });

  it('a host settings file that is a link to /dev/zero is refused, not read', () => {
    const root = tempProject({ init: false });
    mkdirSync(join(root, '.claude'));
    symlinkSync('/dev/zero', join(root, '.claude', 'settings.json'));
    expect(() => readSettings(join(root, '.claude', 'settings.json'))).toThrow(/not a regular file/);
  });

  it('artifact compaction skips a link planted among the deliberations', () => {
    const root = tempProject();
    const dir = join(root, '.cairn', 'artifacts', 'deliberations');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'dold.md'), 'an old deliberation\n');
    symlinkSync('/dev/zero', join(dir, 'dlink.md'));
    utimesSync(join(dir, 'dold.md'), 1, 1);
    const r = compactArtifacts(join(root, '.cairn', 'artifacts'), Date.now());
    expect(r.compacted).toBe(1);
    expect(existsSync(join(dir, 'dold.md.gz'))).toBe(true);
    expect(existsSync(join(dir, 'dlink.md.gz'))).toBe(false);
  });

  it('a curation proposal given as a FIFO is an input error, not a wait', () => {
    const root = tempProject();
    const store = openTestStore(root);
    expect(() => applyProposal(store, fifo(join(root, 'proposal.json')), 'abc')).toThrow(/cannot read the proposal .*not a regular file/);
  });
});

describe('errors.log', () => {
  it('however large, only its tail is read for the last errors', () => {
    const root = tempProject();
    const cache = join(root, '.cairn', 'cache');
    mkdirSync(cache, { recursive: true });
    const lines = Array.from({ length: 20_000 }, (_, i) => `2026-01-01T00:00:00.000Z store-deliberation: error number ${i}`);
    writeFileSync(join(cache, 'errors.log'), lines.join('\n') + '\n');
    expect(readFileSync(join(cache, 'errors.log')).length).toBeGreaterThan(64 * 1024);
    expect(lastErrors(join(root, '.cairn'), 3)).toEqual(lines.slice(-3));
  });
});

import { describe, it, expect } from 'vitest';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { knowledgeDb } from '../lib/knowledge/index.js';
import { cleanEnv, openTestStore, REPO, tempProject } from './helpers.js';

// Many hooks at once (SPEC §2): 8 processes capture 100 entries each into one store whose index
// exists, so every capture also brings the index up to date. Nothing may be lost or doubled.

const PROCESSES = 8;
const EACH = 100;

describe('concurrent captures', () => {
  it(`${PROCESSES} processes × ${EACH} captures: exactly ${PROCESSES * EACH} valid lines, and the index holds them all`, async () => {
    const root = tempProject();
    const store = openTestStore(root, 'conc');
    knowledgeDb(store, ['log']); // the index exists, so each capture updates it
    store.close();

    const dist = (p: string) => JSON.stringify(join(REPO, 'dist', 'lib', p));
    const child = `
      const { openStore } = await import(${dist('store/store.js')});
      const { Deadline } = await import(${dist('core/deadline.js')});
      const { createLogger } = await import(${dist('core/logger.js')});
      const { captureComments } = await import(${dist('knowledge/capture.js')});
      const [root, worker] = process.argv.slice(1);
      const store = openStore({ root, project: 'conc' }, new Deadline(20000), createLogger('t', true), true);
      for (let i = 0; i < ${EACH}; i++) {
        const r = captureComments(store, [{ bead: 'c-' + worker, text: 'LEARNED: worker ' + worker + ' note ' + i + ' about caches', ts: 1700000000 + i, source: 'test' }]);
        if (r.appended.length !== 1 || r.appended[0].status !== 'added') throw new Error('not added: ' + JSON.stringify(r));
      }
      store.close();`;
    const runs = await Promise.all(
      Array.from({ length: PROCESSES }, (_, w) => runNode(['--input-type=module', '-e', child, root, String(w)], root)),
    );
    for (const r of runs) expect(r.code, r.stderr).toBe(0);

    const lines = readFileSync(join(root, '.cairn', 'memory', 'knowledge.jsonl'), 'utf8').split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(PROCESSES * EACH);
    const entries = lines.map((l) => JSON.parse(l) as { key: string; content: string });
    expect(new Set(entries.map((e) => e.key)).size).toBe(PROCESSES * EACH);
    expect(new Set(entries.map((e) => e.content)).size).toBe(PROCESSES * EACH);

    const after = openTestStore(root, 'conc');
    const db = knowledgeDb(after, ['log']);
    expect((db.prepare('SELECT count(*) AS n FROM knowledge WHERE source = 1').get() as { n: number }).n).toBe(PROCESSES * EACH);
    expect(
      (
        db.prepare(`SELECT count(*) AS n FROM knowledge_fts WHERE knowledge_fts MATCH '"caches"'`).get() as {
          n: number;
        }
      ).n,
    ).toBe(PROCESSES * EACH);
  });
});

/** `node …args` in `cwd`, without waiting: the workers run at once. */
function runNode(args: string[], cwd: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd, env: cleanEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

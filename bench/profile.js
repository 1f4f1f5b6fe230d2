// Self time per function from a `node --cpu-prof` profile: where a slow case spends its time.

import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The `limit` functions with the most self time in the (only) .cpuprofile in `dir`. */
export function topSelfTime(dir, limit) {
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`no .cpuprofile in ${dir}`);
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const byFunction = new Map();
  let total = 0;
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = nodes.get(id).callFrame;
    const name = functionName || '(anonymous)';
    const where = url ? `${shortUrl(url)}:${lineNumber + 1}` : '';
    const key = `${name}\u0000${where}`;
    byFunction.set(key, { name, where, us: (byFunction.get(key)?.us ?? 0) + us });
    total += us;
  }
  return [...byFunction.values()]
    .sort((a, b) => b.us - a.us)
    .slice(0, limit)
    .map((f) => ({ name: f.name, where: f.where, ms: f.us / 1000, pct: (100 * f.us) / total }));
}

function shortUrl(url) {
  const path = url.replace(/^file:\/\//, '');
  const repo = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..');
  return path.startsWith(repo) ? relative(repo, path) : path;
}

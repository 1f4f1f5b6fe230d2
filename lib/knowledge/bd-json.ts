import { CairnError } from '../core/errors.js';
import { asObject, jsonErrorPlace } from '../core/json.js';
import { seconds } from './reader.js';
import type { Comment } from './capture.js';

// `bd comments <id> --json` output or JSON lines, for backfill (SPEC §4.2).

/** `now` (Unix seconds) stands in for a missing time. */
export function commentsFromBdJson(text: string, now: number): Comment[] {
  const trimmed = text.trim();
  if (trimmed === '') return [];
  let rows: unknown[];
  try {
    const value = JSON.parse(trimmed) as unknown;
    rows = Array.isArray(value) ? value : [value];
  } catch {
    const lines = trimmed.split('\n').filter((l) => l.trim());
    rows = lines.map((line, i) => {
      try {
        return JSON.parse(line) as unknown;
      } catch (err) {
        const place = jsonErrorPlace(line, err).replace(/^line 1, /, '');
        const what = '--from-bd-json: stdin is neither a JSON array nor JSON lines';
        throw new CairnError('input', `${what} (its line ${i + 1} of JSON: ${place})`);
      }
    });
  }
  const comments: Comment[] = [];
  for (const row of rows.flat()) {
    const o = asObject(row);
    if (!o || typeof o.text !== 'string') continue;
    const bead = typeof o.issue_id === 'string' ? o.issue_id : typeof o.issue === 'string' ? o.issue : '';
    comments.push({ bead, text: o.text, ts: seconds(o.created_at) || now, source: 'bd' });
  }
  return comments;
}

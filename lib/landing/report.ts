import { isAbsolute, relative, sep } from 'node:path';
import { CairnError } from '../core/errors.js';
import { asObject, parseJson } from '../core/json.js';
import { sanitizeUntrusted } from '../core/sanitize.js';

// A landing report (SPEC §5; reference-data/kavi/land-report.example.json), read tolerantly.

export interface LandingReport {
  title: string;
  summary: string;
  prompt: string | null;
  missionId: string | null;
  reportId: string | null;
  /** Relative to the project root; paths outside it dropped. */
  paths: string[];
  validationCommand: string | null;
  commandsRun: string[];
}

// Every field reaches the committed library and an agent's prompt: one line, sanitised, redacted (SPEC §4.6).
const text = (v: unknown): string | null => {
  if (typeof v !== 'string') return null;
  const clean = sanitizeUntrusted(v, { singleLine: true });
  return clean === '' ? null : clean;
};
const texts = (v: unknown): string[] => (Array.isArray(v) ? v.map(text).filter((s): s is string => s !== null) : []);

export function parseLandingReport(text: string, root: string, source = 'the landing report'): LandingReport {
  return readLandingReport(parseJson(text, source), root);
}

/** Without a goal, title or summary it cannot become a pattern. */
export function readLandingReport(json: unknown, root: string): LandingReport {
  const r = asObject(json);
  if (!r) throw new CairnError('input', 'a landing report must be a JSON object');
  const summaryLines = Array.isArray(r.summary) ? texts(r.summary) : [text(r.summary)].filter((s): s is string => s !== null);
  const title = text(r.title) ?? text(r.goal) ?? summaryLines[0] ?? null;
  if (title === null) throw new CairnError('input', 'the landing report has no title, goal or summary');
  const changed = Array.isArray(r.changedByAgent) ? r.changedByAgent.flatMap((a) => texts(asObject(a)?.paths)) : [];
  return {
    title,
    summary: summaryLines.join(' '),
    prompt: text(r.prompt),
    missionId: text(r.missionId),
    reportId: text(r.reportId) ?? text(r.id),
    paths: unique(
      [...changed, ...texts(r.changedPaths), ...texts(r.paths)].map((p) => projectPath(p, root)).filter((p): p is string => p !== null),
    ),
    validationCommand: text(r.validationCommand),
    commandsRun: texts(r.commandsRun),
  };
}

/** `./a/b` → `a/b`; null outside the project. */
function projectPath(path: string, root: string): string | null {
  const rel = isAbsolute(path) ? relative(root, path) : path;
  const clean = rel
    .split(sep)
    .join('/')
    .replace(/^(\.\/)+/, '');
  if (clean === '' || isAbsolute(clean) || clean === '..' || clean.startsWith('../')) return null;
  return clean;
}

export function unique<T>(items: T[]): T[] {
  return [...new Set(items)];
}

import { nowMs } from '../core/clock.js';
import type { Store } from '../store/store.js';
import { appendEventLines } from '../events/log.js';
import { landingCommands } from './commands.js';
import { fingerprint, libraryPath, MAX_PATHS, savePattern, type LandingPattern } from './library.js';
import type { LandingReport } from './report.js';
import { landingTags } from './tags.js';

// A successful landing becomes a pattern of how the work was done (SPEC §5), kept in the library and
// noted in the event log (`landing.captured`, for `cairn events`).

export interface Capture {
  entry: LandingPattern;
  /** An entry of the same fingerprint existed and took this landing in. */
  merged: boolean;
}

export function captureLanding(store: Store, report: LandingReport, scope: { issue: string | null; run: string | null } = { issue: null, run: null }): Capture {
  const { root } = store.location;
  const now = new Date(nowMs()).toISOString();
  const fields = {
    sourceRepoRoot: store.project,
    missionId: report.missionId,
    reportId: report.reportId,
    title: report.title,
    summary: report.summary,
    prompt: report.prompt,
    tags: landingTags(report.paths, report.title, report.prompt),
    examplePaths: report.paths.slice(0, MAX_PATHS),
    commands: landingCommands(report, root),
    createdAt: now,
    updatedAt: now,
  };
  const capture = savePattern(libraryPath(store.dir), { id: `lp-${fingerprint(fields)}`, ...fields }, store.deadline);
  // Only noted in the log (no pattern state derives from it), so no database is opened for it.
  const noted = { type: 'landing.captured' as const, landing: capture.entry.id, title: report.title.slice(0, 200), report: report.reportId, merged: capture.merged, ...scope };
  appendEventLines(store, [noted]);
  return capture;
}

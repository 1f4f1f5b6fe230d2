import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { nowMs } from '../core/clock.js';
import { describeError } from '../core/errors.js';
import type { Store } from '../store/store.js';
import { ensureLines } from '../store/init.js';
import { appendEventLines } from '../events/log.js';
import { landingCommands } from './commands.js';
import {
  fingerprint,
  foldLandings,
  landingLogPath,
  libraryPath,
  MAX_PATHS,
  readLandingLog,
  readLibrary,
  type LandingPattern,
  type LandingRecord,
} from './library.js';
import type { LandingReport } from './report.js';
import { landingTags } from './tags.js';

// A successful landing becomes a pattern of how the work was done (SPEC §5), noted in the event log for `cairn events`.

export interface Capture {
  entry: LandingPattern;
  /** Took in by an entry of the same fingerprint. */
  merged: boolean;
  /** Recorded before (a retried run): nothing written. */
  repeated: boolean;
}

type Scope = { issue: string | null; run: string | null };

/** A pipeline retries a step (or a kept run is applied again after its process died): a landing counts once. */
function isRepeat(earlier: LandingPattern[], capture: LandingRecord): boolean {
  if (capture.issue === null && capture.reportId === null) return false; // nothing tells a retry from a new landing
  return earlier.some((e) => {
    const r = e as Partial<LandingRecord>;
    return (r.issue ?? null) === capture.issue && (r.run ?? null) === capture.run && e.reportId === capture.reportId;
  });
}

export function captureLanding(store: Store, report: LandingReport, scope: Scope = { issue: null, run: null }): Capture {
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
  const record: LandingRecord = { id: `lp-${fingerprint(fields)}`, ...fields, ...scope };
  const log = landingLogPath(store.dir);
  const newLog = !existsSync(log);
  let capture: Capture | undefined;
  // under the log's lock: which captures of this work exist decides merged and repeated
  store.appendLines(log, () => {
    const earlier = [...readLibrary(libraryPath(store.dir)), ...readLandingLog(store.dir, () => {})].filter((c) => c.id === record.id);
    const repeated = isRepeat(earlier, record);
    const [entry] = foldLandings(repeated ? earlier : [...earlier, record]);
    capture = { entry, merged: earlier.length > 0, repeated };
    return repeated ? [] : [JSON.stringify({ v: 1, ...record })];
  });
  if (newLog) keepMergedByUnion(store);
  if (!capture!.repeated) {
    // only noted (no pattern state derives from it): no database opened
    const { entry, merged } = capture!;
    appendEventLines(store, [
      {
        type: 'landing.captured' as const,
        landing: entry.id,
        title: report.title.slice(0, 200),
        report: report.reportId,
        merged,
        ...scope,
      },
    ]);
  }
  return capture!;
}

/** A store older than the landing log gains init's .gitattributes line. */
function keepMergedByUnion(store: Store): void {
  try {
    ensureLines(join(store.dir, '.gitattributes'), ['landings.jsonl merge=union'], store.dir);
  } catch (err) {
    store.log.warn(
      `landings.jsonl is not marked merge=union in .cairn/.gitattributes (${describeError(err)}); add the line, or run cairn init`,
    );
  }
}

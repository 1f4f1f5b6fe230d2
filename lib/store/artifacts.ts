import { lstatSync, readdirSync, unlinkSync } from 'node:fs';
import { readSmallFile, DEFAULT_INPUT_CAP } from '../io/read.js';

/** Deliberation texts were capped at input (SPEC §2): a larger file is not ours. */
const ARTIFACT_CAP = DEFAULT_INPUT_CAP;
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { writeFileAtomic } from '../io/atomic.js';

// An old run's deliberation is only history: gzipped in place (SPEC §4.5).

export interface CompactReport {
  compacted: number;
  bytesBefore: number;
  bytesAfter: number;
}

export function compactArtifacts(artifactsDir: string, before: number): CompactReport {
  const report: CompactReport = { compacted: 0, bytesBefore: 0, bytesAfter: 0 };
  let kinds: string[];
  try {
    kinds = readdirSync(artifactsDir);
  } catch {
    return report;
  }
  for (const kind of kinds) {
    let files: string[];
    try {
      files = readdirSync(join(artifactsDir, kind)).filter((f) => f.endsWith('.md'));
    } catch {
      continue;
    }
    for (const file of files) {
      const path = join(artifactsDir, kind, file);
      const st = lstatSync(path); // a planted link is not followed, not even to read
      if (!st.isFile() || st.mtimeMs >= before) continue;
      const text = readSmallFile(path, ARTIFACT_CAP, true);
      if (text === undefined) continue;
      const packed = gzipSync(text);
      writeFileAtomic(`${path}.gz`, packed, artifactsDir);
      unlinkSync(path);
      report.compacted++;
      report.bytesBefore += st.size;
      report.bytesAfter += packed.length;
    }
  }
  return report;
}

/** `90d` or `90`; undefined when not a number of days. */
export function parseDays(text: string): number | undefined {
  const m = /^(\d+)d?$/.exec(text.trim());
  return m ? Number(m[1]) * 86_400_000 : undefined;
}

// The one source of "now". CAIRN_NOW (ISO-8601) pins it so tests and the demo are reproducible.
export function nowMs(): number {
  const pinned = process.env.CAIRN_NOW;
  if (pinned) {
    const t = Date.parse(pinned);
    if (!Number.isNaN(t)) return t;
  }
  return Date.now();
}

export const DAY_MS = 86_400_000;

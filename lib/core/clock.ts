// CAIRN_NOW (ISO-8601) pins "now" for tests and the demo.
export function nowMs(): number {
  const pinned = process.env.CAIRN_NOW;
  if (pinned) {
    const t = Date.parse(pinned);
    if (!Number.isNaN(t)) return t;
  }
  return Date.now();
}

export const DAY_MS = 86_400_000;

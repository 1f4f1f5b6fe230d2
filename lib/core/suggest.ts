/** An adjacent swap is one edit (`lsit` → `list`). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** A likely typo of `word`, else the one candidate it begins. */
export function nearest(word: string, candidates: Iterable<string>): string | undefined {
  const w = word.toLowerCase();
  const list = [...candidates];
  const limit = Math.max(1, Math.floor(w.length / 3));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const c of list) {
    const distance = editDistance(w, c.toLowerCase());
    if (distance < bestDistance) {
      best = c;
      bestDistance = distance;
    }
  }
  if (best !== undefined) return best;
  const extended = extensionsOf(word, list);
  return extended.length === 1 ? extended[0] : undefined;
}

export function extensionsOf(word: string, candidates: Iterable<string>): string[] {
  const w = word.toLowerCase();
  return w.length < 3 ? [] : [...candidates].filter((c) => c.toLowerCase().startsWith(w));
}

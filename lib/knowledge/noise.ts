// Shell residue (SPEC §4.5, §8): commands stored as knowledge (dropped, ranked low) and tails glued onto notes (trimmed).

const PROGRAMS = [
  'bd|git|gh|cd|npm|npx|pnpm|yarn|bun|node|deno|python3?|pip|uv|cargo|go|make|docker|kubectl|curl|wget',
  'cat|echo|printf|sed|awk|grep|rg|ls|rm|mv|cp|mkdir|chmod|export|source|sudo|sqlite3|jq',
].join('|');
const COMMAND_START = new RegExp(`^(?:${PROGRAMS})\\s`);
const SHELL_SYNTAX = /--[a-z][a-z-]*=|\$\(|<<-?\s*['"]?[A-Z]|\s&&(\s|$)|\s\|\|\s|\\$|\s2>&1|^cd\s+[~/.]/;
const PIPELINE = /['"]\s*\|\s*\\?$|\|\s*(?:sed|grep|awk|tr|head|tail|xargs)\b|\s&&\s|\s\|\|\s|\$\(/m;
const HEADING = /^#{1,6}\s+\S/gm;

/** A note with a command tail glued on is still a note. */
export function isCommandLike(content: string): boolean {
  const text = stripShellResidue(content);
  const firstLine = text.split('\n', 1)[0];
  if (COMMAND_START.test(firstLine) && SHELL_SYNTAX.test(firstLine)) return true;
  if (/^#\s/.test(firstLine) && text.includes('\n') && PIPELINE.test(text)) return true;
  return (text.match(HEADING) ?? []).length >= 2;
}

// a quote closing the note, then a redirection or chained bd/git command; a pipeline inside a note is content
const QUOTED_TAIL = /["']\s*(?:2>&1|2>\/dev\/null|>\s*\/dev\/null|(?:&&|\|\||;)\s*(?:bd|git)\s)/;
const COMMAND_LINE = /^(?:bd\s+(?:close|update|sync|comments?)|git\s+(?:add|commit|push))\b/;

/** Only the last line is read each round: linear. */
export function stripShellResidue(content: string): string {
  let text = content.trimEnd();
  for (;;) {
    const start = text.lastIndexOf('\n') + 1;
    const last = text.slice(start);
    if (start > 0 && COMMAND_LINE.test(last)) {
      text = text.slice(0, start - 1).trimEnd();
      continue;
    }
    const tail = QUOTED_TAIL.exec(last);
    if (!tail) return text;
    text = text.slice(0, start + tail.index).trimEnd();
  }
}

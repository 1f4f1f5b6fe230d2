// Shell residue in a knowledge log (SPEC §4.5, §8): the capture bugs of the system we replace stored
// whole commands as "knowledge" (`bd create --title=… --description="$(cat <<'DESC' …`, `cd /path && \`,
// `# Test the || coverage …` followed by sed pipelines) and glued command tails onto real notes
// (`…messages." && bd close x`). cairn sanitize drops the first kind and trims the second; the index
// ranks the first kind low, so it surfaces only when nothing else matches.

const PROGRAMS =
  'bd|git|gh|cd|npm|npx|pnpm|yarn|bun|node|deno|python3?|pip|uv|cargo|go|make|docker|kubectl|curl|wget|cat|echo|printf|sed|awk|grep|rg|ls|rm|mv|cp|mkdir|chmod|export|source|sudo|sqlite3|jq';
const COMMAND_START = new RegExp(`^(?:${PROGRAMS})\\s`);
// Syntax that prose does not use: flag assignments, substitutions, heredocs, chaining, continuations.
const SHELL_SYNTAX = /--[a-z][a-z-]*=|\$\(|<<-?\s*['"]?[A-Z]|\s&&(\s|$)|\s\|\|\s|\\$|\s2>&1|^cd\s+[~/.]/;
const PIPELINE = /['"]\s*\|\s*\\?$|\|\s*(?:sed|grep|awk|tr|head|tail|xargs)\b|\s&&\s|\s\|\|\s|\$\(/m;
const HEADING = /^#{1,6}\s+\S/gm;

/**
 * Content that is a command or a dump of one, not a note: it begins with a program and shell syntax
 * (`bd create --title=…`, `cd /x && \`), or with a `#` comment line followed by a pipeline, or it
 * is a markdown heading dump (two or more headings, as a pasted issue description has). A note with a
 * command tail glued on is still a note.
 */
export function isCommandLike(content: string): boolean {
  const text = stripShellResidue(content);
  const firstLine = text.split('\n', 1)[0];
  if (COMMAND_START.test(firstLine) && SHELL_SYNTAX.test(firstLine)) return true;
  if (/^#\s/.test(firstLine) && text.includes('\n') && PIPELINE.test(text)) return true;
  return (text.match(HEADING) ?? []).length >= 2;
}

// A quote closing the note, then a redirection or a chained bd/git command, and the rest of that line
// (`…messages." && bd close x`, `…syntax" 2>/dev/null`). A pipeline inside a note (`"$X" | jq …`) is content.
const QUOTED_TAIL = /["']\s*(?:2>&1|2>\/dev\/null|>\s*\/dev\/null|(?:&&|\|\||;)\s*(?:bd|git)\s)/;
const COMMAND_LINE = /^(?:bd\s+(?:close|update|sync|comments?)|git\s+(?:add|commit|push))\b/;

/**
 * A note without the command tail a broken capture glued onto it; the note itself unchanged. Only the
 * last line is read each time (a tail is always there), so a note of thousands of glued commands is
 * read once, not once per command.
 */
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

// The texts the agents write: an adversary's deliberation (findings, evidence, Accumulated Patterns,
// a verdict-json block) and its validator's check of it, in one of two styles:
//   plain     a tidy template: one bold paragraph per finding, a flat bullet list of patterns
//   markdown  markdown as agents write it (the hardship): prose, fenced command output, `path:LINE`
//             citations with code, numbered or bold lists, wrapped items, nested bullets (category
//             headings, provenance notes), verdict-json as an HTML comment or a fenced block, and a
//             validator that sometimes discusses several findings in one paragraph.
// What is said is decided by sim.js; these functions only word and lay it out. `pick(what, n)` is the
// caller's deterministic draw of an index in [0, n).

const SEVERITIES = ['HIGH', 'MEDIUM', 'LOW'];
const DEFAULT_AREAS = ['api/routes/trips.ts', 'services/alerts/server.ts', 'workers/ingest/consumer.py', 'web/src/pages/Fleet.tsx'];
const DEFAULT_CODE = ['return next(err)', 'const page = await repo.list(q)', 'batch = fetch_batch(cursor)', 'useEffect(() => load(), [])'];
const L3_SECTIONS = ['plan §Changes', 'plan §Rollout', 'plan §Testing', 'plan §Risks'];

/** `area:LINE` and a code fragment for a finding (a rule without an area gets a plausible one). */
export function placeOf(rule, pick) {
  const i = pick('area', DEFAULT_AREAS.length);
  const area = rule.area ?? DEFAULT_AREAS[i];
  const code = rule.code ?? DEFAULT_CODE[i];
  return { area, line: 12 + pick('line', 180), code };
}

const TEST_OUTPUT = [
  (n, failed) => [
    '$ npm test -- --ci',
    '',
    `PASS test/trips.test.ts`,
    failed ? 'FAIL test/alerts.test.ts' : 'PASS test/alerts.test.ts',
    '',
    `Tests:       ${failed ? `${failed} failed, ` : ''}${n} passed, ${n + failed} total`,
    'Time:        6.81 s',
  ],
  (n, failed) => [
    '$ pytest -q workers/',
    `${'.'.repeat(Math.min(n, 40))}${'F'.repeat(failed)}`,
    `${n} passed${failed ? `, ${failed} failed` : ''} in 3.42s`,
  ],
  (n, failed) => ['$ make check', `go test ./...`, `ok  \tquayside/gateway\t0.41s`, `exit code ${failed ? 1 : 0}`],
];

function verdictBlock(json, style, fenced) {
  const body = JSON.stringify(json, null, 2);
  if (style === 'markdown' && fenced) return ['```verdict-json', body, '```'].join('\n');
  return ['<!-- jkz:verdict-json', body, '-->'].join('\n');
}

/** Wrap a long list item onto continuation lines, as agents do at ~90 columns. */
function wrapItem(marker, text, width = 92) {
  const indent = ' '.repeat(marker.length + 1);
  const lines = [];
  let current = `${marker} `;
  for (const word of text.split(' ')) {
    if (current.length + word.length > width && current.trim() !== marker) {
      lines.push(current.trimEnd());
      current = indent;
    }
    current += `${word} `;
  }
  lines.push(current.trimEnd());
  return lines;
}

/** Bold the first few words of an item, or all of it. */
function emphasise(text, how) {
  if (how === 0) return `**${text}**`;
  const words = text.split(' ');
  return `**${words.slice(0, 3).join(' ')}** ${words.slice(3).join(' ')}`;
}

/**
 * The adversary's deliberation.
 * findings: [{id, severity, summary, place, patterns?}]; items: [{text, category?, provenance?}];
 * evidence: 'L1' | 'L2' | 'L3'.
 */
export function adversaryText({ role, issue, phase, findings, items, evidence, style, set, pick }) {
  const out = [];
  const where = (f) => (evidence === 'L3' ? L3_SECTIONS[pick(`sec-${f.id}`, L3_SECTIONS.length)] : `${f.place.area}:${f.place.line}`);
  const json = {
    verdict: findings.length ? 'FAIL' : 'PASS',
    issues: findings.map((f) => ({
      id: f.id,
      severity: f.severity,
      summary: f.summary,
      location: where(f),
      must_fix: true,
      ...(f.patterns?.length ? { patterns: f.patterns } : {}),
    })),
    must_fix: findings.map((f) => f.id),
    false_positives: [],
  };
  const cited = findings.find((f) => /\.\w+$/.test(f.place.area))?.place ?? {
    area: DEFAULT_AREAS[0],
    line: 40 + pick('cite-line', 90),
    code: DEFAULT_CODE[0],
  };
  const output = TEST_OUTPUT[pick('runner', TEST_OUTPUT.length)](20 + pick('passed', 60), findings.length ? 1 : 0);

  if (style === 'plain') {
    out.push(`# ${role} — ${issue} ${phase} review (run r1)`, '', '## Findings', '');
    if (!findings.length) out.push('No findings: the change holds up.', '');
    for (const f of findings) out.push(`**${f.id} (${f.severity}).** ${f.summary}. — ${where(f)}`, '');
    out.push('## Evidence', '');
    if (evidence === 'L1') out.push('```', ...output, '```', '');
    else if (evidence === 'L2') out.push(`At ${cited.area}:${cited.line} the code reads \`${cited.code}\`.`, '');
    else out.push('Plan review: nothing was run; the reasoning rests on the plan text.', '');
    out.push('## Accumulated Patterns', '');
    for (const it of items) out.push(`- ${it.text}`);
    out.push('', verdictBlock(json, style, false));
    return out.join('\n') + '\n';
  }

  // markdown as agents write it
  const titles = [
    `# ${role} — ${issue} ${phase} review (run r1, iteration 1)`,
    `## ${cap(role)}: ${issue}`,
    `# ${issue} · ${phase} challenge`,
  ];
  out.push(titles[pick('title', titles.length)], '', set.intros[pick('intro', set.intros.length)](issue), '');
  if (evidence === 'L1') out.push('## Checks run', '', '```', ...output, '```', '');
  const findingStyle = pick('finding-style', 3);
  if (findings.length) out.push(findingStyle === 1 ? '## Findings' : '### Findings', '');
  else out.push('Nothing blocking this time.', '');
  findings.forEach((f, i) => {
    const cite =
      evidence === 'L3'
        ? `This is in ${where(f)}.`
        : set.citeFrames[pick(`cite-${f.id}`, set.citeFrames.length)](`${f.place.area}:${f.place.line}`, f.place.code);
    if (findingStyle === 0) out.push(`**${f.id} — ${f.severity}.** ${f.summary}. ${cite}`, '');
    else if (findingStyle === 1) out.push(`### ${f.id} · ${f.severity}`, '', `${f.summary}.`, '', cite, '');
    else out.push(...wrapItem(`${i + 1}.`, `**${f.id}** (${f.severity}) — ${f.summary}. ${cite}`), '');
    if (evidence === 'L2' && i === 0) out.push('```' + langOf(f.place.area), f.place.code, '```', '');
  });
  if (evidence === 'L2' && !findings.length) out.push(`Checked ${cited.area}:${cited.line}: \`${cited.code}\` is fine.`, '');
  const headings = ['## Accumulated Patterns', '### Accumulated Patterns', '**Accumulated Patterns**', 'Accumulated Patterns:'];
  out.push(headings[pick('ap-heading', headings.length)], '');
  const numbered = pick('ap-numbered', 3) === 0;
  const bold = pick('ap-bold', 4);
  const grouped = items.some((it) => it.category);
  let n = 0;
  let lastCategory = null;
  for (const it of items) {
    const nested = grouped ? '  ' : '';
    if (grouped && it.category !== lastCategory) {
      out.push(`- **${it.category}**`);
      lastCategory = it.category;
    }
    const marker = grouped ? `${nested}-` : numbered ? `${++n}.` : pick(`bullet-${n++}`, 2) ? '-' : '*';
    const text = bold < 2 && pick(`bold-${it.text.length}`, 3) === 0 ? emphasise(it.text, bold) : it.text;
    out.push(...wrapItem(marker, text));
    if (it.provenance) out.push(`${nested}  - ${it.provenance}`);
  }
  out.push('', '## Verdict', '', findings.length ? `FAIL: ${findings.map((f) => f.id).join(', ')} need a change.` : 'PASS.', '');
  out.push(verdictBlock(json, style, pick('fence', 2) === 0));
  return out.join('\n') + '\n';
}

/**
 * The validator's check. verdicts: [{id, kept, summary, place, reason}] where reason is the
 * validator's sentence(s) for a dismissal (already worded, or a bare dismissal).
 */
export function validatorText({ role, adversary, issue, verdicts, style, set, pick }) {
  const mustFix = verdicts.filter((v) => v.kept).map((v) => v.id);
  const json = {
    verdict: mustFix.length ? 'FAIL' : 'PASS',
    issues: [],
    must_fix: mustFix,
    false_positives: verdicts.filter((v) => !v.kept).map((v) => v.id),
  };
  const keep = (v) => set.keepFrames[pick(`keep-${v.id}`, set.keepFrames.length)](v.id, v.summary, `${v.place.area}:${v.place.line}`);
  const verdictLine = mustFix.length ? `FAIL on ${mustFix.join(', ')}.` : 'PASS.';
  const out = [];
  if (style === 'plain') {
    out.push(`# ${role} — ${issue}: check of the ${adversary}`, '', '## Findings review', '');
    if (!verdicts.length) out.push('Nothing was raised.', '');
    for (const v of verdicts) out.push(v.kept ? keep(v) : v.reason, '');
    out.push('## Verdict', '', verdictLine, '', verdictBlock(json, style, false));
    return out.join('\n') + '\n';
  }
  out.push(`# ${role} — ${issue}`, '', set.validatorIntros[pick('v-intro', set.validatorIntros.length)](issue, verdicts.length), '');
  const layout = pick('v-layout', 4);
  if (layout === 0 && verdicts.length > 1) {
    // several findings discussed in one paragraph, as validators often write
    out.push(verdicts.map((v) => (v.kept ? keep(v) : v.reason)).join(' '), '');
  } else {
    for (const v of verdicts) {
      if (layout === 1) {
        out.push(`## ${v.id} — ${v.kept ? 'confirmed' : 'dismissed'}`, '', v.kept ? keep(v) : v.reason, '');
        if (v.kept) out.push('```' + langOf(v.place.area), v.place.code, '```', '');
      } else out.push(v.kept ? keep(v) : v.reason, '');
    }
  }
  out.push('## Verdict', '', verdictLine, '', verdictBlock(json, style, pick('v-fence', 2) === 0));
  return out.join('\n') + '\n';
}

export function severityOf(pick) {
  return SEVERITIES[pick('severity', SEVERITIES.length)];
}

function langOf(path) {
  const ext = path.match(/\.(\w+)$/)?.[1];
  return { ts: 'ts', tsx: 'tsx', py: 'python', sql: 'sql', c: 'c', yaml: 'yaml' }[ext] ?? '';
}

function cap(s) {
  return s[0].toUpperCase() + s.slice(1);
}

// The deliberations the simulated agents write, shaped like fixtures/deliberations/*.md: markdown
// prose, an "Accumulated Patterns" section, and a `<!-- jkz:verdict-json … -->` block last.

import { SOURCE_LINES } from './pools.js';

const SEVERITY = { defect: 'HIGH', alarm: 'MEDIUM' };

/**
 * The auditor's text. `patterns` are the texts it lists under Accumulated Patterns (echoes of its
 * prompt block and what it noticed itself); `findings` are [{id, summary, location, root_cause,
 * fix_hint, kind: 'defect'|'alarm'}], worded as sim.js chose (a check's sentence, or a paraphrase
 * about the concrete change); `evidence` is L1, L2 or L3 and decides the Evidence section.
 */
export function auditorText({ issue, run, patterns, findings, evidence, sourceLine }) {
  const lines = [`# auditor — ${issue} plan review (run ${run}, iteration 1)`, '', '## Summary', ''];
  lines.push(
    findings.length
      ? `I checked the plan for ${issue} against the checks this project keeps coming back to and raise ${findings.length} finding${findings.length === 1 ? '' : 's'}.`
      : `I checked the plan for ${issue} against the checks this project keeps coming back to and found nothing that blocks it.`,
    '',
    '## Findings',
    '',
  );
  for (const f of findings) lines.push(`**${f.id} — ${f.summary} (${SEVERITY[f.kind]}).** At ${f.location}. ${f.fix_hint}.`, '');
  if (findings.length === 0) lines.push('None.', '');
  lines.push('## Evidence', '', ...evidenceLines(evidence, sourceLine), '', '## Accumulated Patterns', '');
  for (const text of patterns) lines.push(`- ${text}`);
  lines.push('', '## Verdict', '', findings.length ? 'Send the plan back for the findings above.' : 'No blocking findings.', '');
  const verdict = {
    verdict: findings.length ? 'FAIL' : 'PASS',
    issues: findings.map((f) => ({
      id: f.id,
      severity: SEVERITY[f.kind],
      summary: f.summary,
      location: f.location,
      root_cause: f.root_cause,
      fix_hint: f.fix_hint,
    })),
    must_fix: findings.map((f) => f.id),
    false_positives: [],
  };
  lines.push(`<!-- jkz:verdict-json\n${JSON.stringify(verdict, null, 2)}\n-->`, '');
  return lines.join('\n');
}

function evidenceLines(level, [path, line, code]) {
  if (level === 'L1') {
    return [
      'I ran the suite on the branch before reviewing:',
      '',
      '```',
      '$ npm test',
      '',
      ' Test Files  4 passed (4)',
      '      Tests  12 passed (12)',
      '```',
    ];
  }
  if (level === 'L2') return [`The code the plan changes today, at ${path}:${line}: \`${code}\`.`];
  return ['This is a plan review: nothing was executed, and the reasoning rests on the plan text.'];
}

/** The curator's check of the auditor: each finding confirmed (must fix) or dismissed as a false positive. */
export function curatorText({ issue, run, reviews }) {
  const mustFix = reviews.filter((r) => r.call === 'confirm').map((r) => r.id);
  const falsePositives = reviews.filter((r) => r.call === 'dismiss').map((r) => r.id);
  const lines = [`# curator — ${issue} / ${run} / plan: check of the auditor`, '', '## Findings review', ''];
  for (const r of reviews) {
    lines.push(
      r.call === 'confirm'
        ? `**${r.id} — confirmed.** The plan does not meet this check. Must fix.`
        : r.why
          ? `**${r.id} — false positive.** This does not apply here: ${r.why}.`
          : `**${r.id} — false positive.**`,
      '',
    );
  }
  if (reviews.length === 0) lines.push('The auditor raised nothing to check.', '');
  lines.push('## Verdict', '', mustFix.length ? `Plan goes back for ${mustFix.join(', ')}.` : 'The plan can go ahead.', '');
  const verdict = {
    verdict: mustFix.length ? 'FAIL' : 'PASS',
    issues: [],
    must_fix: mustFix,
    false_positives: falsePositives,
  };
  lines.push(`<!-- jkz:verdict-json\n${JSON.stringify(verdict, null, 2)}\n-->`, '');
  return lines.join('\n');
}

export function sourceLineFor(index) {
  return SOURCE_LINES[index % SOURCE_LINES.length];
}

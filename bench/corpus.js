// Synthetic but realistic benchmark inputs: pattern texts in the voice of the deliberation
// fixtures (ledgerly, an invoices API), and deliberations shaped like fixtures/deliberations/*.md.
// Everything is drawn from a seeded generator, so every run of the benchmark measures the same data.

/** A small seeded PRNG (mulberry32): the same seed gives the same corpus. */
export function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (list) => list[Math.floor(next() * list.length)],
    chance: (p) => next() < p,
  };
}

const THINGS = [
  'every new CLI flag',
  'a migration that adds a NOT NULL column',
  'the session refresh endpoint',
  'the status command',
  'each new API field',
  'any handler that writes to the ledger',
  'a background job',
  'the invoice exporter',
  'the rate limiter',
  'the retry loop of the queue consumer',
  'a new database index',
  'the JSON output mode',
  'a config option',
  'the webhook sender',
  'a currency conversion',
  'the due-date calculation',
  'a feature flag',
  'the audit trail writer',
  'an error banner',
  'the pagination cursor',
  'a timezone conversion',
  'the PDF renderer',
  'a cached token',
  'the health check',
  'a new SQL query',
  'the login throttle',
  'a schema change',
  'the tax rounding helper',
  'a batch import',
  'the refund path',
  'a new dependency',
  'the deploy script',
  'an environment variable',
  'the CSV parser',
  'a long-running transaction',
  'the signup form',
  'a public endpoint',
  'the metrics exporter',
  'the cron schedule',
  'a test fixture',
  'a log line',
  'the error handler',
  'the password reset flow',
  'a cookie',
  'the idempotency key',
  'the outbox table',
  'a read replica query',
  'the email template',
  'the invoice number sequence',
  'a soft delete',
  'the permission check',
  'a money column',
  'the seed script',
  'an OpenAPI schema',
];
const PLACES = [
  'src/cli/status.ts',
  'src/api/invoices.ts',
  'src/auth/session.ts',
  'src/db/migrations',
  'src/jobs/reminders.ts',
  'src/billing/ledger.ts',
  'src/export/pdf.ts',
  'src/api/refunds.ts',
  'src/queue/consumer.ts',
  'src/webhooks/send.ts',
  'the invoices API',
  'the status CLI',
  'the auth module',
  'the billing service',
  'the admin console',
  'the public API',
  'the reporting jobs',
  'the migration runner',
  'the payment adapter',
  'the tenant scoper',
  'src/api/customers.ts',
  'src/tax/rounding.ts',
  'src/db/pool.ts',
  'src/http/router.ts',
  'src/mail/templates',
  'src/import/csv.ts',
  'src/metrics/exporter.ts',
  'the deploy pipeline',
  'the staging stack',
  'the load tests',
  'src/auth/throttle.ts',
  'src/cli/export.ts',
  'the webhook retries',
  'src/api/tokens.ts',
  'the nightly backfill',
  'src/ledger/outbox.ts',
  'the search indexer',
  'src/api/pagination.ts',
  'the customer portal',
  'src/config/env.ts',
  'src/jobs/cleanup.ts',
  'the OpenAPI document',
  'src/db/replica.ts',
  'the audit module',
  'src/api/webhooks.ts',
  'src/ledger/sequence.ts',
];
const OBLIGATIONS = [
  'must be documented in the man page',
  'must name the test file that proves it',
  'must be behind a feature flag',
  'must run inside one transaction',
  'should log the request id',
  'must be covered by a regression test',
  'must be reviewed by the security owner',
  'should use the shared money helper',
  'must validate its input at the boundary',
  'must be idempotent',
  'should be rolled out in two steps',
  'must keep the old field until clients move',
  'must be added with a default and backfilled',
  'must not block the event loop',
  'should emit a metric',
  'must be scoped by tenant',
  'must set an explicit timeout',
  'should be listed in the changelog',
  'must pin the timezone to UTC in tests',
  'must redact tokens from logs',
  'must use parameterised SQL',
  'should have a rollback plan',
  'must document its exit codes',
  'must be retried with backoff',
];
const MOMENTS = [
  'before merge',
  'before implementation starts',
  'before the release is cut',
  'in the same pull request',
  'before it reaches staging',
  'before the migration runs',
  'when the plan is reviewed',
  'before QA signs off',
  'before the flag is removed',
  'before customers see it',
  'on the first deploy',
  'before the judge reviews the diff',
];
const BAD_ACTIONS = [
  'read secrets from the process arguments',
  'parse money as a float',
  'swallow the original error',
  'print progress lines in JSON mode',
  'add a NOT NULL column without a default',
  'retry a non-idempotent request',
  'compare tokens with ===',
  'trust the client clock',
  'build SQL by string concatenation',
  'call the network inside a transaction',
  'log the full request body',
  'rely on insertion order',
  'skip the tenant filter',
  'change a public field name',
  'mutate a shared fixture',
  'hard-code the currency',
];
const SAFEGUARDS = [
  'a test that fails first',
  'a timeout',
  'an explicit owner',
  'a migration plan',
  'a fallback path',
  'a metric and an alert',
  'the shared helper',
  'a reviewer from the owning team',
  'a changelog entry',
  'an idempotency key',
  'a feature flag',
  'a dry run',
];
const CONSEQUENCES = [
  'consumers pinning to accidental keys',
  'a table lock on the invoices table',
  'duplicated refunds',
  'tokens in the access log',
  'a broken parser in the deploy script',
  'rounding drift in monthly totals',
  'a replay window for stolen sessions',
  'silent data loss on retry',
  'a flaky test that hides real failures',
  'an outage during the migration',
  'wrong due dates near midnight',
  'a breaking change for older clients',
  'cross-tenant reads',
  'an unbounded queue',
  'alerts nobody can act on',
];
const REASONS = [
  'nothing checks the shape',
  'the default is evaluated per row',
  'the retry has no key',
  'the logger prints headers',
  'the first non-JSON line aborts the parser',
  'floats cannot hold cents exactly',
  'the token is not rotated',
  'the handler catches and continues',
  'the fixture is shared between tests',
  'the lock is held while it waits',
  'the server uses local time',
  'the old field is removed in the same release',
  'the query omits the tenant id',
];
const READERS = [
  'the deploy script',
  'people on call',
  'the finance team',
  'the mobile client',
  'the nightly backfill',
  'the support console',
  'the partner integration',
  'the monitoring dashboard',
  'the data warehouse',
  'the billing job',
];

const cap = (s) => s.charAt(0).toUpperCase() + s.slice(1);

// The lists above give the texts a small vocabulary: 51k patterns hold 335 distinct index terms, where
// 1,660 real sentences of the reference data (fixtures/knowledge) hold 2,738. `vocabulary: 'real'`
// adds a project's own names — a module, a file, a function per text — drawn from 30,000 pseudo-words
// by Zipf's law (rank k with probability ∝ 1/k): 2,646 terms for 1,660 texts (a little under the real
// figure), 21,000 for 51k and 26,000 for 100k (vocabulary growing about as N^0.6, as technical text's does).
const SYLLABLES = [
  'ba',
  'ko',
  'ri',
  'tu',
  've',
  'lo',
  'mi',
  'da',
  'po',
  'su',
  'ne',
  'ga',
  'fi',
  'zo',
  'ru',
  'ha',
  'ke',
  'la',
  'mo',
  'ni',
  'pa',
  'qu',
  'ro',
  'si',
  'ta',
  'vu',
  'wo',
  'xi',
  'ya',
  'zu',
  'bo',
  'ci',
  'du',
  'fe',
  'gu',
  'hi',
  'jo',
  'ku',
  'le',
  'me',
];
const NAMES = 30_000;
function projectName(r) {
  let k = Math.floor((NAMES + 1) ** r.next()) - 1;
  let name = '';
  do {
    name += SYLLABLES[k % SYLLABLES.length];
    k = Math.floor(k / SYLLABLES.length);
  } while (k > 0);
  return name.length < 4 ? `${name}x` : name;
}

/** The subject and place of a text: from the lists, or with the project's own names (`vocabulary: 'real'`). */
function subject(r, vocabulary) {
  const thing = vocabulary === 'real' ? `${r.pick(THINGS)} ${projectName(r)}()` : r.pick(THINGS);
  return { thing, place: placeOf(r, vocabulary) };
}
function placeOf(r, vocabulary) {
  return vocabulary === 'real' ? `src/${projectName(r)}/${projectName(r)}.ts` : r.pick(PLACES);
}

/** One pattern text in one of the fixture styles (rule, causal, observation, some with explicit prefixes). */
function patternText(r, vocabulary) {
  const { thing, place } = subject(r, vocabulary);
  switch (r.int(7)) {
    case 0:
    case 1:
      return `${cap(thing)} in ${place} ${r.pick(OBLIGATIONS)} ${r.pick(MOMENTS)}`;
    case 2:
      return `Never ${r.pick(BAD_ACTIONS)} in ${place} without ${r.pick(SAFEGUARDS)}`;
    case 3:
      return `CAUSAL: ${thing} in ${place} leads to ${r.pick(CONSEQUENCES)} because ${r.pick(REASONS)}`;
    case 4:
      return `${cap(thing)} changed in ${place} results in ${r.pick(CONSEQUENCES)} ${r.pick(MOMENTS)}`;
    case 5:
      return `OBSERVATION: ${thing} in ${place} is read by ${r.pick(READERS)} as well as by ${r.pick(READERS)}`;
    default: {
      const other = subject(r, vocabulary);
      return `${cap(thing)} in ${place} is usually touched together with ${other.thing} in ${other.place}`;
    }
  }
}

/** `count` distinct pattern texts (distinct after normalisation), excluding any in `avoid`; `vocabulary`: 'small' (default) or 'real'. */
export function patternTexts(count, seed, avoid = new Set(), vocabulary = 'small') {
  const r = rng(seed);
  const seen = new Set(avoid);
  const out = [];
  while (out.length < count) {
    const text = patternText(r, vocabulary);
    const key = text.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(text);
  }
  return out;
}

const PROSE = [
  'The plan is small and additive, but it leaves the output contract undefined and does not say how the change interacts with the existing flags.',
  'Consumers will pin to whatever keys the first implementation happens to produce, so the shape has to be written down before the judge reviews the diff.',
  'I read the diff against the acceptance criteria line by line; two of them are covered by tests, the third is asserted only in prose.',
  'The migration adds the column in one step; on the production table that takes an exclusive lock for as long as the backfill runs.',
  'Nothing in the change is wrong in isolation, but the retry path calls the refund endpoint without an idempotency key.',
  'The handler catches the error, logs it and carries on with a half-written invoice, which the nightly job later reads as complete.',
  'This is a plan review. Nothing has been built, so the reasoning rests on the plan text and on how the command is consumed by scripts.',
  'The token refresh rotates the access token but keeps the refresh token valid, which leaves a replay window for a stolen session.',
  'The tests pin the clock to UTC, but the server formats due dates in local time, so an invoice created near midnight shifts a day.',
  'Error messages include the full request body; for the token endpoint that body carries the refresh token in plain text.',
];

const TEST_OUTPUT = [
  '$ npm test -- test/status.test.ts',
  '',
  '> ledgerly@2.3.0 test',
  '> vitest run test/status.test.ts',
  '',
  ' ✓ test/status.test.ts (9 tests) 41ms',
  ' ✓ test/invoices.test.ts (14 tests) 88ms',
  ' × test/session.test.ts > refresh > rejects a reused refresh token',
  '   AssertionError: expected 200 to be 401',
  '',
  ' Test Files  1 failed | 2 passed (3)',
  '      Tests  1 failed | 22 passed (23)',
];

/**
 * A deliberation of about `bytes` bytes in the fixtures' shape: summary, findings, evidence with test
 * output and a path:line citation, an "Accumulated Patterns" section, and a verdict-json comment.
 * `items` are the Accumulated Patterns texts; the first `findingsFromItems` of them are also finding summaries.
 */
export function deliberationText({ bytes, role, issue, run, items, findingsFromItems, seed, vocabulary = 'small' }) {
  const r = rng(seed);
  const findings = [];
  const findingCount = Math.max(3, Math.round(bytes / 2500));
  for (let i = 0; i < findingCount; i++) {
    let summary;
    if (i < findingsFromItems) summary = items[i].replace(/^(CAUSAL|OBSERVATION|RULE):\s*/, '');
    else {
      const { thing, place } = subject(r, vocabulary);
      summary = `${cap(thing)} in ${place} ${r.pick(OBLIGATIONS)}`;
    }
    findings.push({
      id: `A${i + 1}`,
      severity: r.pick(['HIGH', 'MEDIUM', 'LOW']),
      summary,
      location: `${placeOf(r, vocabulary)}:${10 + r.int(400)}`,
      must_fix: r.chance(0.6),
    });
  }
  const head = [
    `# ${role} — ${issue} plan review (run ${run}, iteration 1)`,
    '',
    '## Summary',
    '',
    PROSE[0] + ' ' + PROSE[1],
    '',
    '## Findings',
    '',
  ];
  const findingParas = findings.map(
    (f) =>
      `**${f.id} — ${f.summary} (${f.severity}).** ${r.pick(PROSE)} ${r.pick(PROSE)} See \`${f.location}\`: \`const total = lines.reduce(sum, 0)\`.`,
  );
  const evidence = ['## Evidence', '', '```', ...TEST_OUTPUT, '```', ''];
  const patterns = [
    '## Accumulated Patterns',
    '',
    ...items.map((t, i) =>
      i % 5 === 2 && t.length > 60 ? `- ${t.slice(0, t.indexOf(' ', 40))}\n  ${t.slice(t.indexOf(' ', 40) + 1)}` : `- ${t}`,
    ),
    '- n/a',
    '',
  ];
  const verdict = {
    verdict: findings.some((f) => f.must_fix) ? 'FAIL' : 'PASS',
    issues: findings.map((f) => ({
      id: f.id,
      severity: f.severity,
      summary: f.summary,
      location: f.location,
      root_cause: 'underspecified_plan',
      fix_hint: 'See the finding above',
    })),
    must_fix: findings.filter((f) => f.must_fix).map((f) => f.id),
    false_positives: [],
  };
  const tail = [
    '## Verdict',
    '',
    `Send back to the architect: ${verdict.must_fix.join(', ') || 'nothing blocking'}.`,
    '',
    `<!-- jkz:verdict-json\n${JSON.stringify(verdict, null, 2)}\n-->`,
    '',
  ];
  const fixed = [...head, ...findingParas.flatMap((p) => [p, '']), ...evidence, ...patterns, ...tail].join('\n');
  // Fill with review prose (more discussion and more captured output) up to the requested size.
  const filler = [];
  let size = Buffer.byteLength(fixed);
  while (size < bytes) {
    const para = r.chance(0.25)
      ? ['```', ...TEST_OUTPUT.slice(5, 9), '```'].join('\n')
      : `${r.pick(PROSE)} ${r.pick(PROSE)} ${r.pick(PROSE)}`;
    filler.push(para, '');
    size += Buffer.byteLength(para) + 2;
  }
  return [...head, ...findingParas.flatMap((p) => [p, '']), '## Discussion', '', ...filler, ...evidence, ...patterns, ...tail].join('\n');
}

/**
 * A validator's deliberation reviewing `findings` (ids of the adversary's findings): it dismisses the
 * ids in `dismiss` as false positives and keeps the ids in `keep` as must-fix, with a short review.
 */
export function validatorText({ role, issue, run, dismiss, keep }) {
  const lines = [`# ${role} — ${issue} plan review check (run ${run})`, '', '## Review of the findings', ''];
  for (const id of dismiss) lines.push(`- ${id}: does not apply to this change; the plan already covers it. False positive.`);
  for (const id of keep) lines.push(`- ${id}: confirmed against the diff; this must be fixed before implementation.`);
  const verdict = { verdict: keep.length ? 'FAIL' : 'PASS', issues: [], must_fix: keep, false_positives: dismiss };
  lines.push('', `<!-- jkz:verdict-json\n${JSON.stringify(verdict, null, 2)}\n-->`, '');
  return lines.join('\n');
}

// The harder world's facts: the project the pipeline works on ("Quayside", a truck-fleet telemetry
// platform: edge gateways, ingest workers, a billing service, a public API, a web dashboard) and the
// rules its two adversarial agents believe. A rule is true (a finding about it is a real defect the
// validator keeps) or false (it sounds like good practice but does not hold in this project: a
// finding about it is a false alarm the validator dismisses). How agents word a rule — findings,
// rewordings, validator reasons — lives in the wording sets (wording-tuning.js, wording-held-out.js),
// never here: the canonical text below is how a rule is first written down.
//
// Groups (each one comes into play with its hardship switch, sim.js):
//   head        tested regularly: true rules with real defects, false ones raised as false alarms
//   twins       identifier families: two rules one identifier apart, of opposite truth
//   vocab       a rule whose findings and validator reasons use other words than the rule itself
//   tail        a long Zipf tail: listed often, raised rarely (rank 1 most often)
//   drift-old   true until DRIFT_RUN, then obsolete (raised and dismissed in every run after)
//   drift-new   a new true rule from DRIFT_RUN on
// `area` and `code` give a finding a place to point at (`area:LINE` and an inline code fragment).

export const DRIFT_RUN = 15;

/** The two adversarial/validator pairs (SPEC §3.1's conventional pairs). */
export const PAIRS = [
  { adversary: 'auditor', validator: 'curator', phase: 'plan', prefix: 'A' },
  { adversary: 'sentinel', validator: 'lens', phase: 'qa', prefix: 'S' },
];

const rule = (role, group, key, truth, text, area, code) => ({ role, group, key, truth, text, area, code });
const A = (...a) => rule('auditor', ...a);
const S = (...a) => rule('sentinel', ...a);

export const RULES = [
  // ---- auditor (plan review) -----------------------------------------------------------------
  A(
    'head',
    'A-T01',
    true,
    'Every new public endpoint must be described in api/openapi.yaml ' + 'before merge, so that client teams can regenerate their SDKs',
    'api/openapi.yaml',
    'paths:',
  ),
  A(
    'head',
    'A-T02',
    true,
    'Each plan must name the test that proves each acceptance criterion',
    'docs/plans/current.md',
    '## Acceptance criteria',
  ),
  A(
    'head',
    'A-T03',
    true,
    'Every database migration must be split into an additive step and ' + 'a cleanup step, because old pods keep serving during a rollout',
    'db/migrations/0091_trip_segments.sql',
    'ALTER TABLE trips DROP COLUMN legacy_id;',
  ),
  A(
    'head',
    'A-T04',
    true,
    'Every feature flag must have an owner and a removal date in config/flags.yaml',
    'config/flags.yaml',
    'new_route_planner: true',
  ),
  A(
    'head',
    'A-T05',
    true,
    'Each queue consumer must be idempotent, because the broker redelivers a message after a worker crash',
    'workers/ingest/consumer.py',
    'db.insert(reading)',
  ),
  A(
    'head',
    'A-T06',
    true,
    'Every outbound HTTP call must set an explicit timeout, since the default client waits forever',
    'lib/http/client.ts',
    'await fetch(url, { method })',
  ),
  A(
    'head',
    'A-T07',
    true,
    'Each change to an event schema must be registered in the schema registry before producers deploy',
    'schemas/trip_event.avsc',
    '"name": "odometer_km"',
  ),
  A(
    'head',
    'A-T08',
    true,
    'Every user-facing string in the dashboard must go through the i18n catalogue',
    'web/src/pages/Alerts.tsx',
    '<h2>No alerts today</h2>',
  ),
  A(
    'head',
    'A-T09',
    true,
    'Each new environment variable must be added to deploy/env.example and to the Helm values',
    'deploy/env.example',
    'ROUTE_CACHE_TTL=',
  ),
  A('head', 'A-T10', true, 'Money amounts must be stored as integer cents, never as floating point', 'lib/money.ts', 'amount: number'),
  A(
    'head',
    'A-T11',
    true,
    'Each scheduled job must take the Postgres advisory lock before ' + 'it starts, so that two replicas never run the same job',
    'workers/scheduler.ts',
    'schedule("0 2 * * *", runNightly)',
  ),
  A(
    'head',
    'A-T12',
    true,
    'Every breaking API change must bump the major version and be announced in docs/changelog.md',
    'docs/changelog.md',
    '## Unreleased',
  ),
  A(
    'head',
    'A-T13',
    true,
    'Each list endpoint must page with a cursor, never an offset, because trips are inserted while clients page',
    'api/routes/trips.ts',
    'OFFSET $2',
  ),
  A('head', 'A-T14', true, 'Every GPS coordinate must be stored in WGS84 with six decimal places', 'lib/geo/point.ts', 'toFixed(4)'),
  A(
    'head',
    'A-T15',
    true,
    'Plans that touch the trip ingestion path must include a backfill strategy for the data already stored',
    'docs/plans/current.md',
    '## Rollout',
  ),
  A(
    'head',
    'A-T16',
    true,
    'Each new table must declare a primary key and a created_at column with a default',
    'db/migrations/0092_alert_rules.sql',
    'CREATE TABLE alert_rules (',
  ),
  A(
    'head',
    'A-F01',
    false,
    'Every service must expose a /metrics endpoint for Prometheus to scrape',
    'services/alerts/server.ts',
    'app.listen(port)',
  ),
  A('head', 'A-F02', false, 'Each pull request must add an entry to CHANGELOG.md', 'CHANGELOG.md', '## 4.12.0'),
  A(
    'head',
    'A-F03',
    false,
    'Database queries must always go through the ORM, never raw SQL',
    'db/queries/trips.sql',
    'SELECT * FROM trips WHERE fleet_id = $1',
  ),
  A(
    'head',
    'A-F04',
    false,
    'Every React component must have a Storybook story',
    'web/src/components/RouteBadge.tsx',
    'export function RouteBadge(',
  ),
  A(
    'head',
    'A-F05',
    false,
    'Each new dependency must be approved by the security team before merge',
    'package.json',
    '"date-fns": "^3.6.0"',
  ),
  A('head', 'A-F06', false, 'Every plan that adds an endpoint must include a load test', 'docs/plans/current.md', '## Testing'),
  A('head', 'A-F07', false, 'Each service must run its database migrations on startup', 'services/alerts/main.ts', 'await start()'),
  A(
    'head',
    'A-F08',
    false,
    'Every API error must return an RFC 7807 problem+json body',
    'api/errors.ts',
    'res.status(422).json({ error })',
  ),
  A(
    'head',
    'A-F09',
    false,
    'Each worker must be written in TypeScript like the rest of the stack',
    'workers/helper18/sweep.py',
    'def sweep(batch):',
  ),
  A('head', 'A-F10', false, 'Every configuration change must be rolled out behind a feature flag', 'config/ingest.yaml', 'batch_size: 500'),

  A(
    'twins',
    'A-LAN',
    true,
    'The quay-lan gateway must buffer telemetry on local disk while its uplink is down',
    'firmware/lan/uplink.c',
    'drop_frame(f);',
  ),
  A(
    'twins',
    'A-LTE',
    false,
    'The quay-lte gateway must buffer telemetry on local disk while its uplink is down',
    'firmware/lte/uplink.c',
    'ring_push(&ram_ring, f);',
  ),
  A(
    'twins',
    'A-H18',
    true,
    'Workers in helper18 must log every exception before they retry the task',
    'workers/helper18/sweep.py',
    'except TimeoutError: continue',
  ),
  A(
    'twins',
    'A-H3',
    false,
    'Workers in helper3 must log every exception before they retry the task',
    'workers/helper3/retry.py',
    'except TimeoutError: raise',
  ),
  A('twins', 'A-V23', true, 'Responses of API v2.3 must keep the total_count field', 'api/v2_3/trips.ts', 'delete body.total_count'),
  A('twins', 'A-V24', false, 'Responses of API v2.4 must keep the total_count field', 'api/v2_4/trips.ts', 'return { items, next_cursor }'),
  A(
    'twins',
    'A-BILLING',
    true,
    'Every change under services/billing/ must come with a migration test',
    'services/billing/invoice.ts',
    'ALTER TABLE invoices',
  ),
  A(
    'twins',
    'A-BILLINGS',
    false,
    'Every change under services/billings/ must come with a migration test',
    'services/billings/export.ts',
    'readArchive(year)',
  ),

  A(
    'vocab',
    'A-IE11',
    false,
    'Every dashboard page must render correctly in Internet Explorer 11',
    'web/src/pages/FleetMap.tsx',
    'display: grid',
  ),
  A(
    'vocab',
    'A-DOWN',
    false,
    'Each schema migration must be reversible with a down step',
    'db/migrations/0091_trip_segments.sql',
    '-- up only',
  ),
  A(
    'vocab',
    'A-PII',
    true,
    'Personally identifiable information must never reach the analytics pipeline',
    'web/src/analytics/events.ts',
    'track("trip_summary", { email })',
  ),

  A(
    'drift-old',
    'A-ROUTES',
    true,
    'Every new route must be registered in gateway/routes.yaml, so that the edge proxy forwards it',
    'gateway/routes.yaml',
    '- path: /v2/trips',
  ),
  A(
    'drift-new',
    'A-ANNOT',
    true,
    'Every new route must carry an @route annotation naming its owning team',
    'api/routes/alerts.ts',
    'router.get("/alerts", list)',
  ),

  ...[
    [true, 'Log lines must go through the structured logger, never print statements'],
    [false, 'Every source file must start with a licence header'],
    [true, 'Each Dockerfile must pin its base image by digest'],
    [false, 'Every commit must be signed with GPG'],
    [true, 'Every dashboard chart must have an empty state'],
    [false, 'Each TODO comment must reference a ticket number'],
    [true, 'Each config key must have a default in config/defaults.toml'],
    [false, 'Functions must stay shorter than forty lines'],
    [true, 'Error messages shown to drivers must never contain stack traces'],
    [false, 'Every module must keep ninety percent test coverage'],
    [true, 'Batch exports must write to a temporary file and rename it when complete'],
    [false, 'Request payloads must be validated with Joi schemas'],
    [true, 'Time zones must be stored as IANA names, never as fixed offsets'],
    [false, 'Each service must own a separate database'],
    [true, 'Every Helm chart change must bump the chart version'],
    [false, 'Every YAML file must pass yamllint before merge'],
    [true, 'Retry loops must use exponential backoff with jitter'],
    [false, 'Each pull request must have two approving reviewers'],
    [true, 'Cache keys must include the tenant id'],
    [false, 'Every README must start with a table of contents'],
  ].map(([truth, text], i) => ({
    ...A('tail', `A-Z${String(i + 1).padStart(2, '0')}`, truth, text, null, null),
    rank: i + 1,
  })),

  // ---- sentinel (QA and security) ------------------------------------------------------------
  S(
    'head',
    'S-T01',
    true,
    'Session tokens must never be written to logs, even at debug level',
    'services/auth/session.ts',
    'log.debug({ token }, "refreshed")',
  ),
  S(
    'head',
    'S-T02',
    true,
    "Every endpoint that changes data must check the caller's fleet scope",
    'api/routes/vehicles.ts',
    'router.patch("/vehicles/:id", update)',
  ),
  S(
    'head',
    'S-T03',
    true,
    'Each file upload must be size-limited and scanned before it is stored',
    'services/docs/upload.ts',
    'await bucket.put(key, req.body)',
  ),
  S(
    'head',
    'S-T04',
    true,
    'Secrets must be read from Vault at runtime, never baked into the image',
    'Dockerfile',
    'ENV MAPS_API_KEY=ak_live_',
  ),
  S(
    'head',
    'S-T05',
    true,
    'Every SQL statement must use bound parameters, never string concatenation',
    'services/reports/query.ts',
    "`WHERE plate = '${plate}'`",
  ),
  S(
    'head',
    'S-T06',
    true,
    'Each webhook receiver must verify the HMAC signature before parsing the body',
    'api/webhooks/telematics.ts',
    'JSON.parse(raw)',
  ),
  S(
    'head',
    'S-T07',
    true,
    'Login and password-reset endpoints must be rate limited per account and per IP',
    'api/routes/auth.ts',
    'router.post("/password-reset", reset)',
  ),
  S(
    'head',
    'S-T08',
    true,
    'Every dashboard page must send a Content-Security-Policy without unsafe-inline',
    'web/server/headers.ts',
    "script-src 'self' 'unsafe-inline'",
  ),
  S(
    'head',
    'S-T09',
    true,
    "Driver location history must be readable only by the driver's own fleet",
    'api/routes/history.ts',
    'where: { driverId }',
  ),
  S(
    'head',
    'S-T10',
    true,
    "Each admin action must be written to the audit log with the actor's id",
    'services/admin/users.ts',
    'await users.disable(id)',
  ),
  S(
    'head',
    'S-F01',
    false,
    'Every internal service call must use mutual TLS in application code',
    'services/alerts/client.ts',
    'new Agent({ keepAlive: true })',
  ),
  S('head', 'S-F02', false, 'Each API response must include rate-limit headers', 'api/routes/trips.ts', 'res.json(page)'),
  S('head', 'S-F03', false, 'Every form must be protected by a CAPTCHA', 'web/src/pages/Settings.tsx', '<form onSubmit={save}>'),
  S('head', 'S-F04', false, 'Passwords must be hashed with bcrypt', 'services/auth/password.ts', 'argon2.hash(pw)'),
  S('head', 'S-F05', false, 'Each service must rotate its database password every 30 days', 'deploy/helm/values.yaml', 'iamAuth: true'),
  S('head', 'S-F06', false, 'Every response must set the X-XSS-Protection header', 'web/server/headers.ts', 'helmet({ xssFilter: false })'),

  S(
    'twins',
    'S-LTE',
    true,
    'The quay-lte gateway must accept only TLS 1.3 on its management port',
    'firmware/lte/mgmt.c',
    'SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION)',
  ),
  S(
    'twins',
    'S-LAN',
    false,
    'The quay-lan gateway must accept only TLS 1.3 on its management port',
    'firmware/lan/mgmt.c',
    'SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION)',
  ),
  S('twins', 'S-V24', true, 'API v2.4 must reject tokens that lack the fleet claim', 'api/v2_4/auth.ts', 'if (!claims.sub) throw'),
  S('twins', 'S-V23', false, 'API v2.3 must reject tokens that lack the fleet claim', 'api/v2_3/auth.ts', 'if (!claims.sub) throw'),

  S(
    'vocab',
    'S-CSRF',
    false,
    'Cross-site request forgery protection must be enabled on every form',
    'web/src/pages/Settings.tsx',
    '<form onSubmit={save}>',
  ),
  S(
    'vocab',
    'S-ERASE',
    true,
    'Personal data must be erased within 30 days of an erasure request',
    'workers/purge/job.py',
    'TABLES = ["trips", "drivers"]',
  ),

  ...[
    [true, 'Dependencies with a known critical CVE must be upgraded before release'],
    [false, 'Every endpoint must be covered by an OWASP ZAP scan in CI'],
    [true, 'Debug endpoints must be disabled in production builds'],
    [false, 'Each service must use its own TLS certificate authority'],
    [true, 'Signed download URLs must expire within fifteen minutes'],
    [false, 'Every log line must be encrypted by the application before it is written'],
    [true, 'Admin pages must require a second factor'],
    [false, 'Each build must be reproducible bit for bit'],
    [true, 'Error responses must never echo request headers back'],
    [false, 'Every API key must be rotated weekly'],
  ].map(([truth, text], i) => ({
    ...S('tail', `S-Z${String(i + 1).padStart(2, '0')}`, truth, text, null, null),
    rank: i + 1,
  })),
];

export const RULE = new Map(RULES.map((r) => [r.key, r]));

/** The false alarm tracked with room to spare: raised and dismissed in every run. */
export const TRACKED_ALARM = 'A-F01';
export const DRIFT_OLD = 'A-ROUTES';
export const DRIFT_NEW = 'A-ANNOT';

/** The near-miss twins: [true rule, false rule], one identifier apart. */
export const TWINS = [
  ['A-LAN', 'A-LTE'],
  ['A-H18', 'A-H3'],
  ['A-V23', 'A-V24'],
  ['A-BILLING', 'A-BILLINGS'],
  ['S-LTE', 'S-LAN'],
  ['S-V24', 'S-V23'],
];

/** Whether a rule holds at a run (drift: the old rule stops, the new one starts, at DRIFT_RUN). */
export function trueAt(rule, run) {
  if (rule.group === 'drift-old') return run < DRIFT_RUN;
  return rule.truth;
}

/** Whether the agents know the rule at a run (the new rule only appears at DRIFT_RUN). */
export function activeAt(rule, run) {
  return rule.group !== 'drift-new' || run >= DRIFT_RUN;
}

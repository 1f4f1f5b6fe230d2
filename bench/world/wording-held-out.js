// never tuned on: the lead does not read this file
//
// The held-out wording set (set b) of the harder world: the same rules as wording-tuning.js, worded
// by other agents — other finding summaries, rewordings, reasons and prose. The bench's targets are
// judged on this set. Changing cairn by what this file says would turn it into a second tuning set.

const cap = (s) => s[0].toUpperCase() + s.slice(1);

export default {
  name: 'held-out',
  rules: {
    'A-T01': {
      findings: [
        'Alert listing endpoint added in this change has no OpenAPI description',
        'api/openapi.yaml was not updated for the geofence creation call; SDK clients will not see it',
      ],
      reword: 'Before merging, describe each new public endpoint in api/openapi.yaml ' + '— client teams regenerate their SDKs from it',
    },
    'A-T02': {
      findings: [
        'None of the acceptance criteria is tied to a named test case',
        'Which test shows that duplicate alerts are suppressed? The plan does not say',
      ],
      reword: 'Plans need to point to the test that demonstrates every acceptance criterion',
    },
    'A-T03': {
      findings: [
        'legacy_id is removed in the same migration that introduces segment_id',
        'vin is renamed in one step; pods on the previous release will fail mid-rollout',
      ],
      reword:
        'Because old pods keep serving during rollout, database migrations ' + 'must come in two steps: additive first, cleanup later',
    },
    'A-T04': {
      findings: ['Flag new_route_planner has neither owner nor expiry', 'eta_v2 is registered without a date for its removal'],
      reword: 'Each feature flag in config/flags.yaml needs an owner and a removal date',
    },
    'A-T05': {
      findings: ['A redelivered ingest message creates a duplicate reading row', 'The odometer consumer has no dedup on message id'],
      reword: 'Since the broker redelivers after a crash, every consumer of the queue must tolerate the same message twice',
    },
    'A-T06': {
      findings: ['Maps API requests in the http client have no deadline', 'If the geocoding upstream stalls, our call never returns'],
      reword: 'Give every outbound HTTP request an explicit timeout — the default client never gives up',
    },
    'A-T07': {
      findings: [
        'Producers ship the odometer_km field before the registry knows about it',
        'Schema registry entry for the trip event change is missing',
      ],
      reword: 'Event schema changes must reach the schema registry before any producer is deployed',
    },
    'A-T08': {
      findings: ['Alerts page has an English literal where a catalogue key belongs', 'New fleet-page labels are not translatable'],
      reword: 'All dashboard text a user sees must come from the i18n catalogue',
    },
    'A-T09': {
      findings: ['env.example lacks ROUTE_CACHE_TTL although the planner needs it', 'MAPS_REGION is not in the chart values'],
      reword: 'New environment variables belong in deploy/env.example and in the Helm values, both',
    },
    'A-T10': {
      findings: ['Invoice totals are held as floating-point euros in money.ts', 'Surcharge arithmetic uses floats and rounds wrong'],
      reword: 'Never keep money in floating point; use integer cents',
    },
    'A-T11': {
      findings: ['scheduler.ts runs the nightly job with no lock held', 'The compaction task may run twice when both scheduler pods fire'],
      reword: 'So that no two replicas execute one job, every scheduled job has to acquire the Postgres advisory lock first',
    },
    'A-T12': {
      findings: ['vehicle_id is renamed in a minor release with nothing in the changelog', 'Removal of /v2/fleet/summary is not announced'],
      reword: 'Breaking changes to the API need a major version bump and an entry in docs/changelog.md',
    },
    'A-T13': {
      findings: [
        'Trip listing paginates by offset, so rows shift while new trips arrive',
        'Alert history pages by page number, not by cursor',
      ],
      reword: 'Use cursors, not offsets, for every list endpoint — trips keep arriving during paging',
    },
    'A-T14': {
      findings: [
        'Coordinates are truncated to 4 decimals in point.ts',
        'Geofence polygons are saved in projected metres instead of WGS84 degrees',
      ],
      reword: 'Store every GPS position as WGS84 with six decimals',
    },
    'A-T15': {
      findings: [
        'Ingest format changes, but existing odometer rows are left in the old format',
        'Nothing in the plan migrates trips recorded before the segment change',
      ],
      reword: 'A plan that changes trip ingestion has to say how already-stored data gets backfilled',
    },
    'A-T16': {
      findings: ['created_at on alert_rules has no default value', 'geofence_events is missing a primary key'],
      reword: 'New tables need a primary key and a defaulted created_at column',
    },
    'A-F01': {
      findings: ['Alerts service cannot be scraped: no /metrics', 'No Prometheus metrics route on services/alerts'],
      reword: 'Services should all expose /metrics so Prometheus can scrape them',
      why: [
        'telemetry is push-based via the OTel collector and nothing here scrapes',
        'there is no Prometheus in this deployment; services push through OpenTelemetry',
      ],
    },
    'A-F02': {
      findings: ['CHANGELOG.md is untouched by this PR', 'Geofence export is not mentioned in the changelog'],
      reword: 'Pull requests should always come with a CHANGELOG.md line',
      why: ['the changelog is produced at release time from commit messages', 'release-please owns that file; hand edits get overwritten'],
    },
    'A-F03': {
      findings: ['Trip report bypasses the ORM with a hand-written query', 'Raw SQL file added under db/queries'],
      reword: 'All database access should use the ORM rather than raw SQL',
      why: [
        'this codebase has no ORM: sqlc generates code from SQL files on purpose',
        'db/queries/*.sql is exactly where queries are supposed to live',
      ],
    },
    'A-F04': {
      findings: ['No story file for RouteBadge', 'AlertList lacks Storybook coverage'],
      reword: 'Add a Storybook story for every React component',
      why: ['we dropped Storybook last year and rely on Playwright visual snapshots', 'Storybook is not installed in web/'],
    },
    'A-F05': {
      findings: ['Nobody from security signed off on date-fns', 'Two new packages lack a security review'],
      reword: 'Security must approve every new dependency before it is merged',
      why: [
        'the CI allowlist check is the approval; there is no per-package review',
        'packages are vetted automatically against advisories and licences in the pipeline',
      ],
    },
    'A-F06': {
      findings: ['Alerts endpoint is planned without a load test', 'Geofence route has no performance test in the plan'],
      reword: 'Plans adding endpoints should include load testing',
      why: [
        'every route is load tested each night on staging by the k6 job',
        'performance tests are not part of plans; the nightly suite covers new routes',
      ],
    },
    'A-F07': {
      findings: ['Pending migrations are not applied at service boot', 'alerts main.ts does not migrate the schema on start'],
      reword: 'Services must apply their DB migrations when they boot',
      why: [
        'a dedicated pre-deploy step migrates; services must never migrate themselves',
        'migrating from the service is prohibited because several replicas would do it at once',
      ],
    },
    'A-F08': {
      findings: ['Error responses are not problem+json', 'The 422 body is not an RFC 7807 document'],
      reword: 'Error bodies from the API must follow RFC 7807 (problem+json)',
      why: [
        'our own error envelope is the published contract and clients depend on it',
        'RFC 7807 was considered and rejected; the envelope stays',
      ],
    },
    'A-F09': {
      findings: ['helper18 sweep is in Python rather than TypeScript', 'Purge worker added as Python'],
      reword: 'Write every worker in TypeScript, matching the other services',
      why: ['workers are deliberately Python to share the data team’s geo code', 'the worker image ships a Python runtime only'],
    },
    'A-F10': {
      findings: ['Ingest batch_size is changed with no flag guarding it', 'Retention change is not behind a feature flag'],
      reword: 'Config changes should ship behind feature flags',
      why: [
        'settings roll out through per-environment GitOps overlays, not flags',
        'flags guard code paths; configuration has its own staged rollout',
      ],
    },

    'A-LAN': {
      findings: [
        'quay-lan gateway loses frames whenever the uplink drops',
        'On an outage the quay-lan firmware discards readings instead of spooling them to disk',
      ],
      reword: 'The quay-lan gateway has to spool telemetry to its disk during uplink outages',
    },
    'A-LTE': {
      findings: ['quay-lte gateway holds outage data only in memory', 'No disk spooling on quay-lte while the link is down'],
      reword: 'The quay-lte gateway has to spool telemetry to its disk during uplink outages',
      why: [
        'the quay-lte box is diskless; an in-memory ring is the intended design',
        'there is no storage on quay-lte hardware, so RAM buffering is correct',
      ],
    },
    'A-H18': {
      findings: ['helper18 swallows exceptions with no log line', 'Exceptions caught by helper18 disappear before the retry'],
      reword: 'Before a retry, helper18 must log the exception it caught',
    },
    'A-H3': {
      findings: ['helper3 does not log what it caught before retrying', 'helper3 retries quietly after a TimeoutError'],
      reword: 'Before a retry, helper3 must log the exception it caught',
      why: [
        'helper3 hands the error back up, and the supervisor writes it to the log',
        'logging happens once in the helper3 supervisor; a second log line would duplicate it',
      ],
    },
    'A-V23': {
      findings: ['total_count disappeared from v2.3 trip responses', 'v2.3 serializer strips total_count'],
      reword: 'Keep total_count in API v2.3 responses',
    },
    'A-V24': {
      findings: ['v2.4 list responses have no total_count', 'total_count absent from API v2.4'],
      reword: 'Keep total_count in API v2.4 responses',
      why: ['v2.4 removed that field deliberately in favour of cursors', 'the v2.4 contract has no total_count; only v2.3 keeps it'],
    },
    'A-BILLING': {
      findings: [
        'services/billing/ invoice change lacks a migration test',
        'No migration test for the invoices ALTER in services/billing/',
      ],
      reword: 'A migration test must accompany every change in services/billing/',
    },
    'A-BILLINGS': {
      findings: ['services/billings/ export edit has no migration test', 'Change to services/billings/ comes without a migration test'],
      reword: 'A migration test must accompany every change in services/billings/',
      why: [
        'services/billings/ is a read-only archive without a schema of its own',
        'the archive under billings/ has no tables, so no migration can exist',
      ],
    },

    'A-IE11': {
      findings: ['FleetMap relies on grid layout and ?. syntax that IE11 does not support', 'Alerts page will not load in IE11'],
      reword: 'Dashboard pages should be tested in Internet Explorer 11',
      why: ['only current evergreen browsers are supported', 'our browser policy covers evergreen Chrome, Edge, Firefox and Safari'],
    },
    'A-DOWN': {
      findings: ['Segment migration cannot be rolled back', 'Migration 0091 ships without an undo script'],
      reword: 'Every schema migration needs a down migration so it can be reversed',
      why: ['migrations here are forward-only by policy', 'nothing is ever rolled back in this database; fixes go forward'],
    },
    'A-PII': {
      findings: [
        'Driver emails are sent to Segment with the trip summary event',
        'Tracking call forwards phone numbers to product analytics',
      ],
      reword: 'Analytics must never receive personally identifiable information',
    },

    'A-ROUTES': {
      findings: [
        'gateway/routes.yaml has no entry for the alerts route',
        'Edge proxy will not forward the geofence route: routes.yaml not updated',
      ],
      reword: 'So that the edge proxy forwards it, register every new route in gateway/routes.yaml',
      why: [
        'routing is annotation-driven now and gateway/routes.yaml is gone',
        'the proxy discovers routes from annotations since the migration; there is no routes file',
      ],
    },
    'A-ANNOT': {
      findings: [
        'Alerts handler has no @route annotation naming an owner team',
        'Geofence handler annotation does not say which team owns it',
      ],
      reword: 'Each new route needs an @route annotation with the owning team',
    },

    'A-Z01': { findings: ['print() calls in sweep.py instead of logger calls'] },
    'A-Z02': {
      findings: ['Licence header missing in route_cache.ts'],
      why: ['we rely on the root LICENSE file; per-file headers are not a convention'],
    },
    'A-Z03': { findings: ['Ingest image is pinned by tag only, not by digest'] },
    'A-Z04': {
      findings: ['Unsigned commits in the branch'],
      why: ['commit signing is not enforced in this repository'],
    },
    'A-Z05': { findings: ['Fuel chart renders empty with no placeholder'] },
    'A-Z06': {
      findings: ['TODO without a ticket in planner.ts'],
      why: ['ticketless TODOs are accepted by our lint config'],
    },
    'A-Z07': { findings: ['digest_hour has no default value'] },
    'A-Z08': { findings: ['buildRoute is too long at 63 lines'], why: ['function length is not limited here'] },
    'A-Z09': { findings: ['Drivers see a raw stack trace when routing fails'] },
    'A-Z10': { findings: ['lib/geo coverage below 90 percent'], why: ['coverage has no threshold in CI'] },
    'A-Z11': { findings: ['CSV export is written in place, not via a temp file'] },
    'A-Z12': { findings: ['Payload validation uses zod instead of Joi'], why: ['zod is the standard validator here'] },
    'A-Z13': { findings: ['Depot hours saved with fixed UTC offsets'] },
    'A-Z14': {
      findings: ['Alerts service has no database of its own'],
      why: ['services share one Postgres by design, each with its own schema'],
    },
    'A-Z15': { findings: ['Ingest chart version not bumped'] },
    'A-Z16': { findings: ['values.yaml not yamllinted'], why: ['we lint charts with helm lint only'] },
    'A-Z17': { findings: ['Telematics retries use a constant delay'] },
    'A-Z18': { findings: ['Only one reviewer approved'], why: ['a single approval satisfies branch protection'] },
    'A-Z19': { findings: ['Route cache is keyed without tenant'] },
    'A-Z20': { findings: ['Ingest README lacks a TOC'], why: ['the docs site builds the TOC automatically'] },

    'S-T01': {
      findings: ['Refresh token ends up in debug logs', 'Bearer token value is logged when a session refreshes'],
      reword: 'Even at debug level, session tokens must not appear in logs',
    },
    'S-T02': {
      findings: ['Vehicle update does not verify the fleet of the caller', 'Geofences of another fleet are editable by any dispatcher'],
      reword: "Any endpoint that modifies data has to verify the caller's fleet scope",
    },
    'S-T03': {
      findings: ['Uploads are written to the bucket unscanned and unbounded', 'No size cap or malware scan on document upload'],
      reword: 'Cap the size of every upload and scan it before storing it',
    },
    'S-T04': {
      findings: ['MAPS_API_KEY is baked into the container image', 'Live maps key set via ENV in the Dockerfile'],
      reword: 'Secrets come from Vault at runtime; never put them in the image',
    },
    'S-T05': {
      findings: ['Plate search concatenates user input into SQL', 'SQL injection risk in the reports plate query'],
      reword: 'Always bind parameters in SQL; never concatenate strings into statements',
    },
    'S-T06': {
      findings: ['Webhook JSON is parsed before the HMAC check', 'Telematics receiver verifies the signature too late'],
      reword: 'Verify the HMAC signature of each webhook before the body is parsed',
    },
    'S-T07': {
      findings: ['Password reset is not rate limited', 'Login throttles by IP only, not by account'],
      reword: 'Login and reset endpoints need rate limits per account as well as per IP',
    },
    'S-T08': {
      findings: ["Dashboard CSP permits 'unsafe-inline'", 'Inline scripts are allowed by the script-src policy'],
      reword: 'Dashboard pages need a Content-Security-Policy without unsafe-inline',
    },
    'S-T09': {
      findings: ["Any fleet can read a driver's location history", 'History query filters on driver but not fleet'],
      reword: "Location history of a driver may only be read by that driver's fleet",
    },
    'S-T10': {
      findings: ['User disable action leaves no audit trail', 'Role changes in the admin console are not attributed to an actor'],
      reword: 'Write every admin action to the audit log together with who performed it',
    },
    'S-F01': {
      findings: ['Trips client has no mTLS configured', 'Plain HTTP between alerts and trips services'],
      reword: 'Application code must set up mutual TLS for internal calls',
      why: ['mTLS is handled transparently by the mesh sidecars', 'the sidecar proxy already encrypts and authenticates every hop'],
    },
    'S-F02': {
      findings: ['No rate-limit headers on trip listing', 'Alerts API omits X-RateLimit-Remaining'],
      reword: 'Rate-limit headers should be present on every API response',
      why: ['those headers are added by the gateway, not by services', 'services are behind the gateway, which owns rate limiting'],
    },
    'S-F03': {
      findings: ['Settings form lacks a CAPTCHA', 'Geofence editor is not CAPTCHA-protected'],
      reword: 'Put a CAPTCHA on every form',
      why: ['CAPTCHA is only for anonymous sign-up; these forms require login', 'authenticated staff forms never use CAPTCHA'],
    },
    'S-F04': {
      findings: ['argon2 used instead of bcrypt for passwords', 'bcrypt is not the password hash'],
      reword: 'Use bcrypt for password hashing',
      why: ['argon2id is mandated by our security baseline', 'bcrypt would be a downgrade from argon2id'],
    },
    'S-F05': {
      findings: ['Ingest DB password has no 30-day rotation', 'Reports database credential is never rotated'],
      reword: 'Rotate each service’s database password every 30 days',
      why: ['database access uses short-lived IAM tokens; no password exists', 'with IAM auth there are no static credentials to rotate'],
    },
    'S-F06': {
      findings: ['X-XSS-Protection header is not set', 'The XSS filter header is disabled on the dashboard'],
      reword: 'Responses need an X-XSS-Protection header',
      why: [
        'that header is deprecated and deliberately off; CSP covers it',
        'modern browsers ignore it and it can introduce leaks, so it stays disabled',
      ],
    },
    'S-LTE': {
      findings: ['quay-lte management port allows TLS 1.2', 'TLS 1.2 still negotiable on quay-lte mgmt'],
      reword: 'Only TLS 1.3 may be accepted on the quay-lte management port',
    },
    'S-LAN': {
      findings: ['quay-lan management port allows TLS 1.2', 'TLS 1.2 negotiable on quay-lan mgmt'],
      reword: 'Only TLS 1.3 may be accepted on the quay-lan management port',
      why: [
        'quay-lan hardware cannot do TLS 1.3 and its port only listens on the depot VLAN',
        'TLS 1.2 is the documented exception for quay-lan, which is never exposed beyond the depot',
      ],
    },
    'S-V24': {
      findings: ['v2.4 lets tokens without a fleet claim through', 'API v2.4 never checks the fleet claim'],
      reword: 'API v2.4 has to refuse tokens missing the fleet claim',
    },
    'S-V23': {
      findings: ['v2.3 lets tokens without a fleet claim through', 'API v2.3 never checks the fleet claim'],
      reword: 'API v2.3 has to refuse tokens missing the fleet claim',
      why: [
        'v2.3 tokens are legacy and the gateway attaches the fleet before forwarding',
        'the claim did not exist when v2.3 shipped; the gateway maps those tokens',
      ],
    },
    'S-CSRF': {
      findings: ['Settings form has no CSRF token', 'Geofence editor submits without anti-CSRF protection'],
      reword: 'Enable cross-site request forgery protection on all forms',
      why: [
        'auth is a bearer header rather than a cookie, so a forged cross-site request carries nothing',
        'sessions are never cookie-based here; the Authorization header is required',
      ],
    },
    'S-ERASE': {
      findings: ['trip_archive is not covered by the GDPR purge', 'Erased drivers remain in archived exports for months'],
      reword: 'Erasure requests must be completed for all personal data within 30 days',
    },

    'S-Z01': { findings: ['Lockfile still pins a lodash with a critical CVE'] },
    'S-Z02': { findings: ['New endpoint not in the ZAP scan'], why: ['ZAP runs weekly on staging, not per build'] },
    'S-Z03': { findings: ['Production build exposes /debug/vars'] },
    'S-Z04': {
      findings: ['Shared internal CA used by the alerts service'],
      why: ['a single mesh-managed CA is intended'],
    },
    'S-Z05': { findings: ['Download URLs last a whole day'] },
    'S-Z06': {
      findings: ['Application writes ingest logs unencrypted'],
      why: ['the log store encrypts at rest; apps need not'],
    },
    'S-Z07': { findings: ['Admin console has no 2FA'] },
    'S-Z08': { findings: ['Web build is not bit-for-bit reproducible'], why: ['reproducible builds are not required'] },
    'S-Z09': { findings: ['Request headers are reflected in 400 responses'] },
    'S-Z10': { findings: ['Partner key not rotated this week'], why: ['key rotation is yearly by policy'] },
  },

  reasonFrames: [
    (id, fact) => `**${id}: not an issue.** ${cap(fact)}.`,
    (id, fact) => `Dismissing ${id} — ${fact}.`,
    (id, fact) => `${id} is a false alarm, since ${fact}.`,
    (id, fact) => `${id}. ${cap(fact)}; nothing to fix.`,
  ],
  bareDismissal: (id) => `${id}: not an issue.`,
  wrongDismissals: ['fine as is for this change', 'we accept this for now', 'covered by an existing ticket', 'intended behaviour'],
  keepFrames: [
    (id, summary, at) => `${id} is valid — ${at}. ${summary}.`,
    (id, summary) => `Agree with ${id}: ${summary[0].toLowerCase()}${summary.slice(1)}. Blocking.`,
  ],
  citeFrames: [(at, code) => `Evidence: ${at} — \`${code}\`.`, (at, code) => `(${at}) \`${code}\``],
  intros: [
    (issue) => `Challenge for ${issue}. Most of it is fine; the points below block it.`,
    (issue) => `Reviewed ${issue} end to end, including the parts the plan does not mention.`,
    (issue) => `${issue}: a few gaps, listed in order of risk.`,
  ],
  validatorIntros: [
    (issue, n) => `${n} challenge${n === 1 ? '' : 's'} on ${issue}, each checked in the repository.`,
    (issue) => `Verification of the adversarial findings on ${issue}.`,
  ],
  categories: ['Storage and schema', 'Interfaces and routing', 'Background work', 'Frontend', 'Security posture'],
  provenance: [(issue) => `came up again on ${issue}`, (issue) => `noted first on ${issue}`],
};

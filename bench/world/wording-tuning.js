// The tuning wording set (set a) of the harder world: how the agents word each rule of rules.js.
// Per rule: `findings`, the summaries an adversary writes in its verdict-json when it raises the
// rule (about the concrete file, as agents do); `reword`, a rewording it uses when it lists the rule
// from memory (synonyms, reordered clauses); and for a rule a validator dismisses (a false rule, or
// the obsolete one after the drift), `why`: the facts the validator's reason states. The held-out
// set (wording-held-out.js) words the same rules differently; the targets are judged there.

const cap = (s) => s[0].toUpperCase() + s.slice(1);

export default {
  name: 'tuning',
  rules: {
    'A-T01': {
      findings: [
        'The new GET /v2/alerts route is not in api/openapi.yaml',
        'POST /v2/geofences ships without an OpenAPI entry, so the SDK generator will miss it',
      ],
      reword: 'New public endpoints must be documented in api/openapi.yaml ' + 'prior to merge so client teams can regenerate SDKs',
    },
    'A-T02': {
      findings: [
        'The plan lists three acceptance criteria but names no test for any of them',
        'Acceptance criterion 2 (alerts are de-duplicated) has no test named in the plan',
      ],
      reword: 'A plan must say which test proves every acceptance criterion',
    },
    'A-T03': {
      findings: [
        'Migration 0091 drops trips.legacy_id in the same step that adds its replacement',
        'The rename of vehicles.vin happens in a single migration, which breaks pods still on the old release',
      ],
      reword: 'Split every database migration into an additive step and ' + 'a cleanup step, since old pods still serve during rollouts',
    },
    'A-T04': {
      findings: [
        'new_route_planner is added to config/flags.yaml without an owner or a removal date',
        'The eta_v2 flag has no removal date',
      ],
      reword: 'Feature flags must each carry an owner and a removal date in config/flags.yaml',
    },
    'A-T05': {
      findings: [
        'The ingest consumer inserts a reading twice when the same message is redelivered',
        'consumer.py writes the odometer row without checking the message id, so a redelivery duplicates it',
      ],
      reword: 'Every queue consumer must be idempotent because the broker redelivers messages after a worker crashes',
    },
    'A-T06': {
      findings: [
        'lib/http/client.ts calls fetch for the maps API with no timeout',
        'The geocoder client waits indefinitely when the upstream hangs',
      ],
      reword: 'Outbound HTTP calls must always set an explicit timeout; the default client waits forever',
    },
    'A-T07': {
      findings: [
        'trip_event.avsc gains odometer_km but the plan deploys producers before registering the schema',
        'The new field in the trip event is not registered in the schema registry',
      ],
      reword: 'Register each event schema change in the schema registry before any producer deploys',
    },
    'A-T08': {
      findings: [
        '"No alerts today" is hard-coded in Alerts.tsx instead of coming from the i18n catalogue',
        'Three new labels on the fleet page bypass the translation catalogue',
      ],
      reword: 'Dashboard strings shown to users must all go through the i18n catalogue',
    },
    'A-T09': {
      findings: [
        'ROUTE_CACHE_TTL is read by the planner but missing from deploy/env.example',
        'The new MAPS_REGION variable is absent from the Helm values',
      ],
      reword: 'Every new environment variable must be added both to deploy/env.example and to the Helm values',
    },
    'A-T10': {
      findings: [
        'lib/money.ts keeps the invoice amount as a JavaScript number of euros',
        'Fuel surcharges are summed as floats, so totals drift by a cent',
      ],
      reword: 'Store money as integer cents and never as floating point',
    },
    'A-T11': {
      findings: [
        'The nightly runner in scheduler.ts starts without taking the advisory lock',
        'Two scheduler replicas can both start the 02:00 compaction job',
      ],
      reword: 'Every scheduled task must take the Postgres advisory lock ' + 'before starting, so two replicas never run the same task',
    },
    'A-T12': {
      findings: [
        'The rename of vehicle_id ships without a major version bump or a changelog entry',
        'docs/changelog.md does not mention the removed /v2/fleet/summary route',
      ],
      reword: 'A breaking API change must bump the major version and be announced in docs/changelog.md',
    },
    'A-T13': {
      findings: [
        '/v2/trips pages with OFFSET, so clients skip rows while trips are being inserted',
        'The alert history endpoint uses page numbers instead of a cursor',
      ],
      reword: 'List endpoints must use cursor paging, never offsets, because trips arrive while clients page',
    },
    'A-T14': {
      findings: [
        'point.ts rounds coordinates to four decimals before saving',
        'Geofence vertices are stored in Web Mercator metres, not WGS84',
      ],
      reword: 'GPS coordinates must be kept in WGS84 with six decimal places',
    },
    'A-T15': {
      findings: [
        'The plan changes how odometer readings are ingested but says nothing about the readings already stored',
        'No backfill is planned for trips ingested before the new segment format',
      ],
      reword: 'Any plan touching trip ingestion must include a backfill strategy for data already stored',
    },
    'A-T16': {
      findings: ['alert_rules is created without a default for created_at', 'The new geofence_events table has no primary key'],
      reword: 'Every new table must declare a primary key plus a created_at column with a default',
    },
    'A-F01': {
      findings: ['The alerts service has no /metrics endpoint for Prometheus', 'services/alerts does not expose scrape metrics'],
      reword: 'Each service must expose a Prometheus /metrics endpoint for scraping',
      why: [
        'metrics are pushed through the OpenTelemetry collector; nothing scrapes /metrics in this stack',
        'Quayside exports metrics with the OTel SDK, and there is no Prometheus server to scrape anything',
      ],
    },
    'A-F02': {
      findings: ['The PR does not add a CHANGELOG.md entry', 'No changelog line for the new geofence export'],
      reword: 'Every pull request must add a CHANGELOG.md entry',
      why: [
        'CHANGELOG.md is generated by release-please from the commit messages',
        'nobody edits the changelog by hand here; the release job writes it from conventional commits',
      ],
    },
    'A-F03': {
      findings: [
        'db/queries/trips.sql adds a raw SQL query instead of using the ORM',
        'The report query is hand-written SQL rather than an ORM call',
      ],
      reword: 'Never use raw SQL: database queries must always go through the ORM',
      why: [
        'the project uses sqlc, so hand-written SQL files are the data layer and there is no ORM',
        'queries are plain SQL compiled by sqlc by design',
      ],
    },
    'A-F04': {
      findings: ['RouteBadge has no Storybook story', 'The new AlertList component ships without a story'],
      reword: 'React components must each have a Storybook story',
      why: [
        'Storybook was removed from the dashboard in 2025; components are covered by Playwright screenshots',
        'there is no Storybook in this repository any more',
      ],
    },
    'A-F05': {
      findings: ['date-fns is added without a security team approval', 'The plan adds two npm packages with no security sign-off'],
      reword: 'New dependencies must be approved by the security team before merging',
      why: [
        'dependencies are checked in CI against the licence and advisory allowlist; there is no manual approval step',
        'the security team approves the allowlist, not single packages, and CI enforces it',
      ],
    },
    'A-F06': {
      findings: ['The plan adds GET /v2/alerts without a load test', 'No load test is planned for the geofence endpoint'],
      reword: 'Each plan adding an endpoint must include a load test',
      why: [
        'load tests run nightly against staging for every route; plans do not carry their own',
        'the nightly k6 suite picks up new routes from the OpenAPI file automatically',
      ],
    },
    'A-F07': {
      findings: [
        'The alerts service does not run its migrations when it starts',
        'main.ts starts serving without applying pending migrations',
      ],
      reword: 'Every service must run its database migrations at startup',
      why: [
        'migrations run in a separate pre-deploy job; running them ' + 'on startup is forbidden here because replicas would race',
        'the deploy pipeline applies migrations once before the rollout, never from the service',
      ],
    },
    'A-F08': {
      findings: ['api/errors.ts returns a custom error object instead of problem+json', 'Validation errors are not RFC 7807 documents'],
      reword: 'API errors must return problem+json bodies as in RFC 7807',
      why: [
        'the error envelope {error: {code, message}} is the documented ' + 'contract in openapi.yaml; RFC 7807 was never adopted',
        'clients parse the existing error envelope, and switching to problem+json would break them',
      ],
    },
    'A-F09': {
      findings: ["helper18's sweep is written in Python, not TypeScript", 'The new purge worker is a Python module'],
      reword: 'Workers must be written in TypeScript like the rest of the stack',
      why: [
        'the workers are Python by design: they share the geo and pandas code with the data team',
        'all of workers/ is Python and the worker runtime image only has Python',
      ],
    },
    'A-F10': {
      findings: [
        'batch_size in config/ingest.yaml changes without a feature flag',
        'The new retention period is changed directly in config instead of behind a flag',
      ],
      reword: 'Configuration changes must each be rolled out behind a feature flag',
      why: [
        'configuration is rolled out through GitOps review per environment; flags are for code paths, not settings',
        'config changes reach staging first through the environment overlays, which is the rollout control here',
      ],
    },

    'A-LAN': {
      findings: [
        'The quay-lan gateway drops telemetry frames when its uplink is down',
        'firmware/lan/uplink.c discards readings during an outage ' + 'instead of writing them to disk on the quay-lan gateway',
      ],
      reword: 'While its uplink is down, the quay-lan gateway must buffer telemetry to local disk',
    },
    'A-LTE': {
      findings: [
        'The quay-lte gateway keeps outage telemetry in RAM instead of on disk',
        'quay-lte firmware does not write buffered frames to local storage when the uplink is lost',
      ],
      reword: 'While its uplink is down, the quay-lte gateway must buffer telemetry to local disk',
      why: [
        'quay-lte units have no disk at all; they keep a five-minute ring in RAM by design',
        'the LTE gateway hardware has no storage, and the RAM ring is the specified behaviour',
      ],
    },
    'A-H18': {
      findings: [
        'helper18 catches exceptions in the sweep and drops them without logging',
        'The retry loop in helper18 swallows TimeoutError silently',
      ],
      reword: 'helper18 workers must log each exception before retrying the task',
    },
    'A-H3': {
      findings: [
        'helper3 retries a failed task without logging the exception',
        'The helper3 retry path does not log the TimeoutError it catches',
      ],
      reword: 'helper3 workers must log each exception before retrying the task',
      why: [
        'helper3 re-raises after the retry, and its supervisor logs the exception once',
        "helper3's supervisor already logs every failure it receives; logging in the worker would double every line",
      ],
    },
    'A-V23': {
      findings: ['API v2.3 trip responses no longer include total_count', 'The v2.3 serializer deletes total_count'],
      reword: 'API v2.3 responses must keep the total_count field',
    },
    'A-V24': {
      findings: ['API v2.4 trip listings omit total_count', 'total_count is missing from v2.4 responses'],
      reword: 'API v2.4 responses must keep the total_count field',
      why: [
        'v2.4 dropped total_count on purpose; its clients page by cursor',
        'the field was removed from v2.4 in the published contract; only v2.3 keeps it for the old Android app',
      ],
    },
    'A-BILLING': {
      findings: [
        'The invoice change in services/billing/ has no migration test',
        'services/billing/invoice.ts alters the invoices table with no migration test',
      ],
      reword: 'Changes under services/billing/ must each come with a migration test',
    },
    'A-BILLINGS': {
      findings: [
        'services/billings/export.ts changes without a migration test',
        'No migration test covers the change in services/billings/',
      ],
      reword: 'Changes under services/billings/ must each come with a migration test',
      why: [
        'services/billings/ is the frozen read-only archive of the 2021 invoices; it has no database and no migrations',
        'billings/ only reads archived exports, so there is nothing to migrate',
      ],
    },

    'A-IE11': {
      findings: [
        'FleetMap.tsx uses CSS grid and optional chaining, which IE11 cannot run',
        'The new alerts page breaks on IE11 because of ES2020 syntax',
      ],
      reword: 'Every dashboard page must work in Internet Explorer 11',
      why: [
        'the support matrix has been evergreen browsers only since January',
        'customers are on evergreen browsers; the legacy Microsoft browser was dropped from the contract',
      ],
    },
    'A-DOWN': {
      findings: ['0091_trip_segments.sql has no rollback', 'There is no way to undo the segment migration if the release is reverted'],
      reword: 'Schema migrations must each be reversible with a down step',
      why: [
        'we roll forward only: a bad migration is fixed by the next one',
        'the team never reverts schema changes; the runbook says to ship a forward fix',
      ],
    },
    'A-PII': {
      findings: [
        "The trip_summary event sends the driver's email address to Segment",
        'Driver phone numbers end up in the product dashboards through the tracking call',
      ],
      reword: 'PII must never reach the analytics pipeline',
    },

    'A-ROUTES': {
      findings: [
        'GET /v2/alerts is missing from gateway/routes.yaml',
        'The new geofence route is not registered in gateway/routes.yaml, so the edge proxy will not forward it',
      ],
      reword: 'New routes must be registered in gateway/routes.yaml so the edge proxy forwards them',
      why: [
        'gateway/routes.yaml was deleted when routing moved to annotations; the proxy discovers routes itself now',
        'the edge proxy reads @route annotations since the routing migration, and routes.yaml no longer exists',
      ],
    },
    'A-ANNOT': {
      findings: [
        'The /alerts handler has no @route annotation, so no team owns it',
        'The new geofence handler lacks an owner in its @route annotation',
      ],
      reword: 'New routes must each carry an @route annotation that names the owning team',
    },

    'A-Z01': { findings: ['sweep.py prints progress with print() instead of the structured logger'] },
    'A-Z02': {
      findings: ['route_cache.ts has no licence header'],
      why: ['the repository is covered by the top-level LICENSE file; headers are not used'],
    },
    'A-Z03': { findings: ['The ingest Dockerfile uses python:3.12-slim without a digest'] },
    'A-Z04': {
      findings: ['Two commits in this PR are not GPG-signed'],
      why: ['signed commits are not required; the merge queue signs the merge commit'],
    },
    'A-Z05': { findings: ['The fuel chart shows a blank canvas when there is no data'] },
    'A-Z06': {
      findings: ['A TODO in planner.ts has no ticket number'],
      why: ['TODOs without tickets are allowed; the linter only flags FIXME'],
    },
    'A-Z07': { findings: ['alerts.digest_hour is read without a default in config/defaults.toml'] },
    'A-Z08': {
      findings: ['buildRoute() is 63 lines long'],
      why: ['there is no function length limit in this codebase'],
    },
    'A-Z09': { findings: ['The driver app shows the raw stack trace when a route fails to load'] },
    'A-Z10': {
      findings: ['Coverage of lib/geo drops to 84 percent'],
      why: ['coverage is reported, not gated; no module has a coverage floor'],
    },
    'A-Z11': { findings: ['The monthly CSV export writes straight into the final file'] },
    'A-Z12': {
      findings: ['The geofence handler validates its payload with zod, not Joi'],
      why: ["zod is the project's validator and Joi is not a dependency"],
    },
    'A-Z13': { findings: ['Depot opening hours are stored as +01:00 offsets'] },
    'A-Z14': {
      findings: ['The alerts service shares the main Postgres database'],
      why: ['one shared Postgres with a schema per service is the architecture'],
    },
    'A-Z15': { findings: ['The ingest chart changes resources without bumping its version'] },
    'A-Z16': {
      findings: ['deploy/helm/values.yaml was not run through yamllint'],
      why: ['yamllint is not part of the toolchain; helm lint checks the charts'],
    },
    'A-Z17': { findings: ['The telematics retry loop sleeps a fixed two seconds between attempts'] },
    'A-Z18': { findings: ['This PR has only one approving review'], why: ['one approval is the branch rule here'] },
    'A-Z19': { findings: ["The route cache key omits the tenant id, so fleets can see each other's routes"] },
    'A-Z20': {
      findings: ['docs/ingest/README.md has no table of contents'],
      why: ['short READMEs need no table of contents; the docs site generates one'],
    },

    'S-T01': {
      findings: ['session.ts logs the refresh token at debug level', 'The token refresh path writes the raw bearer token to the log'],
      reword: 'Never write session tokens to logs, not even at debug level',
    },
    'S-T02': {
      findings: [
        "PATCH /vehicles/:id updates a vehicle without checking the caller's fleet",
        "A dispatcher from one fleet can edit another fleet's geofences",
      ],
      reword: "Endpoints that change data must each check the caller's fleet scope",
    },
    'S-T03': {
      findings: [
        'The document upload stores the file before any size limit or virus scan',
        'upload.ts accepts files of any size and skips the scanner',
      ],
      reword: 'File uploads must be size-limited and scanned before storage',
    },
    'S-T04': {
      findings: [
        'The Dockerfile bakes MAPS_API_KEY into the image',
        'A live maps key is set with ENV in the image instead of read from Vault',
      ],
      reword: 'Read secrets from Vault at runtime and never bake them into images',
    },
    'S-T05': {
      findings: ['The plate search builds its WHERE clause by string concatenation', 'query.ts interpolates the plate number into SQL'],
      reword: 'SQL statements must always use bound parameters instead of string concatenation',
    },
    'S-T06': {
      findings: [
        'The telematics webhook parses the JSON body before checking the HMAC',
        'Webhook signatures are verified after the payload is already parsed',
      ],
      reword: 'Webhook receivers must verify the HMAC signature before they parse the body',
    },
    'S-T07': {
      findings: ['/password-reset has no rate limit', 'The login route is rate limited per IP but not per account'],
      reword: 'Rate limit login and password reset per account and per IP',
    },
    'S-T08': {
      findings: ['The dashboard CSP still allows unsafe-inline scripts', "headers.ts sets script-src with 'unsafe-inline'"],
      reword: 'Each dashboard page must send a Content-Security-Policy that forbids unsafe-inline',
    },
    'S-T09': {
      findings: [
        "The history endpoint returns a driver's positions to any authenticated fleet",
        'Location history is filtered by driver id but not by fleet',
      ],
      reword: "Only the driver's own fleet may read driver location history",
    },
    'S-T10': {
      findings: ['Disabling a user from the admin console writes no audit entry', 'users.ts changes roles without logging who did it'],
      reword: 'Every admin action must be written to the audit log with the id of the actor',
    },
    'S-F01': {
      findings: [
        'alerts/client.ts calls the trips service without mutual TLS',
        'The service-to-service client sets up no client certificate',
      ],
      reword: 'Internal service calls must each use mutual TLS in application code',
      why: [
        'the service mesh terminates mTLS on every hop; application code must not do it again',
        'Linkerd already gives every internal call mutual TLS, so the client is right to use plain HTTP',
      ],
    },
    'S-F02': {
      findings: ['GET /v2/trips does not return rate-limit headers', 'Responses from the alerts API carry no X-RateLimit headers'],
      reword: 'Every API response must include rate-limit headers',
      why: [
        'the API gateway adds rate-limit headers at the edge; services never set them',
        'rate limiting and its headers belong to the gateway, not to each service',
      ],
    },
    'S-F03': {
      findings: ['The settings form has no CAPTCHA', 'The geofence editor form can be submitted without a CAPTCHA'],
      reword: 'Each form must be protected by a CAPTCHA',
      why: ['only the public sign-up takes a CAPTCHA; forms behind login do not', 'these forms are only reachable by signed-in staff'],
    },
    'S-F04': {
      findings: ['password.ts hashes with argon2 instead of bcrypt', 'Password hashing does not use bcrypt'],
      reword: 'Hash passwords with bcrypt',
      why: [
        "argon2id is the project's password standard, and it is stronger than bcrypt",
        'the security baseline requires argon2id; bcrypt is the older choice',
      ],
    },
    'S-F05': {
      findings: [
        "The ingest service's database password is not rotated every 30 days",
        'No rotation is configured for the reports database credentials',
      ],
      reword: 'Database passwords must be rotated every 30 days for each service',
      why: [
        'services connect with short-lived IAM auth tokens; there are no database passwords',
        'iamAuth is on for every service, so there is no static password to rotate',
      ],
    },
    'S-F06': {
      findings: ['The dashboard does not send X-XSS-Protection', 'headers.ts disables the XSS filter header'],
      reword: 'Each response must set the X-XSS-Protection header',
      why: [
        'X-XSS-Protection is obsolete and turned off on purpose; the CSP does that job',
        'browsers removed the XSS auditor, and helmet disables the header by default for that reason',
      ],
    },
    'S-LTE': {
      findings: [
        'The quay-lte gateway still accepts TLS 1.2 on its management port',
        'quay-lte mgmt.c sets the minimum protocol to TLS 1.2',
      ],
      reword: 'The management port of the quay-lte gateway must accept TLS 1.3 only',
    },
    'S-LAN': {
      findings: ["The quay-lan gateway's management port negotiates TLS 1.2", 'quay-lan firmware allows TLS 1.2 on management'],
      reword: 'The management port of the quay-lan gateway must accept TLS 1.3 only',
      why: [
        'the quay-lan chipset stops at TLS 1.2 and its management ' + 'port is bound to the depot VLAN; 1.2 is accepted by design',
        'quay-lan units cannot do 1.3 and the port is not reachable outside the depot network',
      ],
    },
    'S-V24': {
      findings: ['API v2.4 accepts tokens without a fleet claim', 'The v2.4 auth check only looks at sub, not at the fleet claim'],
      reword: 'Tokens lacking the fleet claim must be rejected by API v2.4',
    },
    'S-V23': {
      findings: ['API v2.3 accepts tokens that have no fleet claim', 'v2.3 auth lets through tokens without a fleet claim'],
      reword: 'Tokens lacking the fleet claim must be rejected by API v2.3',
      why: [
        'v2.3 predates fleet claims; the gateway maps each legacy token to a fleet before it reaches the service',
        'legacy v2.3 tokens never carry the claim, and the gateway injects the fleet header for them',
      ],
    },
    'S-CSRF': {
      findings: ['The settings form posts without a CSRF token', 'No anti-CSRF token on the geofence editor'],
      reword: 'Every form must have cross-site request forgery protection enabled',
      why: [
        'the console authenticates with a bearer header, not cookies, so there is no ambient credential to forge',
        'no cookie carries the session; requests without the Authorization header are refused',
      ],
    },
    'S-ERASE': {
      findings: [
        'The GDPR purge job skips the trip_archive table',
        'Deleted drivers still appear in the archived trip exports after two months',
      ],
      reword: 'Erase personal data within 30 days of an erasure request',
    },

    'S-Z01': { findings: ['lodash 4.17.15 with a critical advisory is still in the lockfile'] },
    'S-Z02': {
      findings: ['No ZAP scan covers the new endpoint'],
      why: ['DAST runs weekly against staging; CI does not run ZAP'],
    },
    'S-Z03': { findings: ['/debug/vars is reachable in the production build'] },
    'S-Z04': {
      findings: ['The alerts service uses the shared internal CA'],
      why: ['one internal CA managed by the mesh is the design'],
    },
    'S-Z05': { findings: ['Export download links stay valid for 24 hours'] },
    'S-Z06': {
      findings: ['The ingest logs are not encrypted by the application'],
      why: ['log storage is encrypted at rest by the platform; apps write plain lines'],
    },
    'S-Z07': { findings: ['The admin console accepts a password alone'] },
    'S-Z08': {
      findings: ['The web build embeds a timestamp and is not reproducible'],
      why: ['bit-for-bit builds are not a requirement here'],
    },
    'S-Z09': { findings: ["The 400 handler echoes the request's headers in its body"] },
    'S-Z10': { findings: ['The partner API key was last rotated in March'], why: ['API keys rotate yearly by policy'] },
  },

  /** A validator's dismissal with its reason. */
  reasonFrames: [
    (id, fact) => `${id} — false positive. ${cap(fact)}.`,
    (id, fact) => `${id}: dismissed; ${fact}.`,
    (id, fact) => `${id} does not hold: ${fact}.`,
    (id, fact) => `Not a defect (${id}). ${cap(fact)}.`,
  ],
  /** A dismissal without a reason. */
  bareDismissal: (id) => `${id} — false positive.`,
  /** What a validator says when it wrongly waves a real defect through. */
  wrongDismissals: [
    'the plan already covers this in its rollout section',
    'this is out of scope for the change',
    'already handled elsewhere in the codebase',
    'not reproducible on main',
  ],
  /** A validator keeping a finding. */
  keepFrames: [
    (id, summary, at) => `${id} — confirmed. ${summary} (${at}). Must fix.`,
    (id, summary) => `${id} holds: ${summary[0].toLowerCase()}${summary.slice(1)}. Must fix.`,
  ],
  /** How an agent cites the place in prose (markdown as agents write it). */
  citeFrames: [(at, code) => `See \`${at}\`: \`${code}\`.`, (at, code) => `The code at ${at} reads \`${code}\`.`],
  intros: [
    (issue) => `The builder's plan for ${issue} is mostly sound; I am challenging it where it leaves gaps.`,
    (issue) => `I went through ${issue} against what we have learned so far. Notes below.`,
    (issue) => `${issue} touches more than its title suggests, so I read the whole diff.`,
  ],
  validatorIntros: [
    (issue, n) => `I checked the ${n} finding${n === 1 ? '' : 's'} raised on ${issue} against the code.`,
    (issue) => `Review of the challenge on ${issue}.`,
  ],
  /** Category headings agents group their patterns under (nested lists). */
  categories: [
    'Data and migrations',
    'API contracts and routes',
    'Workers and scheduled jobs',
    'Dashboard and browser',
    'Security and secrets',
  ],
  /** Provenance notes agents nest under a pattern. */
  provenance: [(issue) => `seen again in ${issue}`, (issue) => `first raised in ${issue}, still relevant`],
};

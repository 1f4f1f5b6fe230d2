// What the simulated adversary (the auditor of a fictional invoices API, ledgerly) keeps saying.
// TRUE_CHECKS hold up whenever a validator looks at them; FALSE_ALARMS are checks that do not apply
// to this project (its `why` is what the validator answers), raised again and again all the same.
// The texts are written to be distinct: no two share a normalised substring, so every finding lands
// on its own pattern, as the fixtures' recurring texts do.

export const TRUE_CHECKS = [
  'A migration that adds a NOT NULL column must ship with a default and a backfill',
  'Money amounts must be stored as integer cents, never as floating point numbers',
  'Every handler that writes to the ledger must run inside one database transaction',
  'Webhook deliveries must carry an idempotency key so retries cannot double-charge a customer',
  'Plans must name the test file that proves each acceptance criterion before implementation starts',
  'SQL must be built with bound parameters; concatenating user input into a query is forbidden',
  'Access tokens must be redacted from request logs before anything is written',
  'Due dates are computed in the customer timezone, because server-local dates shift invoices near midnight',
  'Every query behind a public endpoint needs a tenant filter, otherwise one customer reads another',
  'A renamed API field must keep its old name until the clients have moved',
  'Outbound HTTP calls must set an explicit timeout',
  'Retried payment calls must back off exponentially with jitter',
  'Tests that depend on the clock must pin it, or they flake around midnight',
  'A refund must never exceed the amount that was captured',
  'Background jobs must be safe to run twice, since the queue delivers at least once',
  'Do not call the network while a database transaction is open',
  'Tax rounding goes through the shared rounding helper so invoices and reports agree',
  'A machine-readable output mode must not print banners or progress lines',
  'Password reset tokens must expire and work only once',
  'Invoice numbers come from the database sequence, not from counting rows',
  'A new environment variable must be added to the config schema with a default',
  'Errors must be wrapped with context, never swallowed by an empty catch block',
  'A column still read by old code is dropped in a second deploy, after the code stops reading it',
  'Offset paging skips rows under concurrent inserts, so list endpoints page with a stable cursor',
  'A converted amount must record the exchange rate and when it was fetched',
  'Permission checks belong in the service layer, not only in the UI',
  'CSV imports must validate each row and report the line number of every rejected row',
  'Session cookies must be HttpOnly, Secure and SameSite',
  'Secrets must be compared in constant time',
  'Long data migrations run in batches so the invoices table is never locked for minutes',
  'Deleting a customer soft-deletes the record and keeps its ledger entries for the auditors',
  'The audit trail must record who changed an invoice and when',
  'Rate limits apply per tenant and per API key',
  'Each feature flag needs an owner and a removal date',
  'The PDF renderer must embed its fonts, or invoices print with substituted glyphs abroad',
  'Reads from the replica must tolerate lag for rows the same request just wrote',
  'Email templates must escape names that customers typed',
  'Cron schedules are written in UTC',
  'Every error response uses the documented error shape with a stable code',
  'A new dependency needs a stated reason and a licence check',
];

export const FALSE_ALARMS = [
  {
    text: 'Every new CLI flag must be documented in the man page before merge',
    why: 'ledgerly ships no man page; flags are documented in the help string and the README',
  },
  {
    text: 'Each change must update the GraphQL schema and regenerate its types',
    why: 'the API is REST only; there is no GraphQL schema',
  },
  {
    text: 'The Kubernetes manifests must declare resource limits for the service',
    why: 'ledgerly deploys to a managed platform; there are no manifests',
  },
  {
    text: 'New endpoints must be registered in the API gateway configuration',
    why: 'there is no gateway; the router is the only entry point',
  },
  {
    text: 'The MongoDB reporting copy drifts unless each schema change is applied to it as well',
    why: 'there is no MongoDB; reporting reads the Postgres replica',
  },
  {
    text: 'User-facing strings must be added to the translation catalogue for all twelve locales',
    why: 'the product is English only and has no catalogue',
  },
  {
    text: 'The minimum supported mobile app version must be bumped whenever the API changes',
    why: 'there is no mobile app',
  },
  { text: 'Each new module must ship a Storybook story', why: 'the service has no UI components' },
  {
    text: 'Merging without a staging load test leads to latency regressions in production',
    why: 'load tests run weekly by policy, not per pull request',
  },
  {
    text: 'Any new field requires a data protection impact assessment',
    why: 'the assessment is only required for new personal data, and this field is not personal',
  },
  {
    text: 'Every exported function must carry a JSDoc comment with examples',
    why: 'the style guide asks for comments on public modules only',
  },
  {
    text: 'The architecture review board must approve the plan before implementation',
    why: 'the board only reviews new services',
  },
  {
    text: 'New code must reach one hundred percent branch coverage',
    why: 'the project gate is 80 percent line coverage',
  },
  {
    text: 'Raw SQL is not allowed; every query must go through the ORM',
    why: 'the project has no ORM and uses a query builder by design',
  },
  {
    text: 'Docker images must be rebuilt and scanned for every change, documentation included',
    why: 'images are built by CI on release tags only',
  },
  {
    text: 'The Terraform state must be updated for every new configuration option',
    why: 'configuration lives in environment variables, not Terraform',
  },
  {
    text: 'Every commit must be signed with a hardware security key',
    why: 'signing is enforced on release tags, not on commits',
  },
  {
    text: 'Storing dates as Unix timestamps in seconds avoids timezone bugs',
    why: 'the schema uses timestamptz on purpose',
  },
  {
    text: 'A table missing from the data warehouse export leads to silent gaps in the finance dashboards',
    why: 'there is no warehouse export',
  },
  {
    text: 'German-speaking customers read the changelog, so it is published in English and German',
    why: 'the changelog is English only',
  },
];

/** Files a finding can cite at a line (the L2 evidence of an auditor text). */
export const SOURCE_LINES = [
  ['src/api/invoices.ts', 57, 'const total = lines.reduce((sum, l) => sum + l.amount, 0)'],
  ['src/billing/ledger.ts', 112, 'await db.insert(entries).values(rows)'],
  ['src/db/migrations/0042_add_due_date.sql', 3, 'ALTER TABLE invoices ADD COLUMN due_date date NOT NULL'],
  ['src/auth/session.ts', 88, 'res.cookie("sid", token, { httpOnly: true })'],
  ['src/cli/status.ts', 14, ".option('-v, --verbose', 'show per-dependency timings')"],
  ['src/webhooks/send.ts', 41, 'await fetch(url, { method: "POST", body })'],
];

#!/usr/bin/env node
require('../dist/bin/store-deliberation.cjs').run(process.argv.slice(2));

#!/usr/bin/env node
require('../dist/bin/load.cjs')('store-deliberation').run(process.argv.slice(2));

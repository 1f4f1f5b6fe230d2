#!/usr/bin/env node
require('../dist/bin/auto-recall.cjs').run(process.argv.slice(2));

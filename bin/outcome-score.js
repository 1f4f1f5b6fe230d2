#!/usr/bin/env node
require('../dist/bin/load.cjs')('outcome-score').run(process.argv.slice(2));

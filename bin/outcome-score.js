#!/usr/bin/env node
require('../dist/bin/outcome-score.cjs').run(process.argv.slice(2));

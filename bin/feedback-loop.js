#!/usr/bin/env node
require('../dist/bin/load.cjs')('feedback-loop').run(process.argv.slice(2));

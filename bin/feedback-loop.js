#!/usr/bin/env node
require('../dist/bin/feedback-loop.cjs').run(process.argv.slice(2));

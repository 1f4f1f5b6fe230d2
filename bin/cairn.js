#!/usr/bin/env node
require('../dist/bin/load.cjs')('cairn').run(process.argv.slice(2));

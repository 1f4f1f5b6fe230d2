#!/usr/bin/env node
import { run } from '../dist/bin/outcome-score.js';

await run(process.argv.slice(2));

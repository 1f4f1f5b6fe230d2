#!/usr/bin/env node
import { run } from '../dist/bin/store-deliberation.js';

await run(process.argv.slice(2));

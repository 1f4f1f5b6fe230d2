#!/usr/bin/env node
import { run } from '../dist/bin/feedback-loop.js';

await run(process.argv.slice(2));

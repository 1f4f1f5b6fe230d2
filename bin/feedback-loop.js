#!/usr/bin/env node
import { main } from '../dist/lib/cli.js';

await main('feedback-loop', process.argv.slice(2));

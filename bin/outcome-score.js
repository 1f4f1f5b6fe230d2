#!/usr/bin/env node
import { main } from '../dist/lib/cli.js';

await main('outcome-score', process.argv.slice(2));

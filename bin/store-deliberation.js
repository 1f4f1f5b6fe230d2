#!/usr/bin/env node
import { main } from '../dist/lib/cli.js';

await main('store-deliberation', process.argv.slice(2));

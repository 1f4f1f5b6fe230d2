// A worker thread of the harder world's bench: runs the streams it is sent, one at a time. Each thread
// has its own process.env, so CAIRN_NOW set by one stream's driver never reaches another's.

import { parentPort } from 'node:worker_threads';
import { runStream } from './stream.js';

parentPort.on('message', (job) => {
  try {
    parentPort.postMessage({ ok: true, result: runStream(job) });
  } catch (err) {
    parentPort.postMessage({
      ok: false,
      error: `${job.row}/${job.set}/${job.variant}/seed ${job.seed}: ${err.stack ?? err}`,
    });
  }
});

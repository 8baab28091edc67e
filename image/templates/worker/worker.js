// The app: a background worker with no web port.  Every 5 seconds it does
// one run of its job (here: counting), logs a heartbeat and writes
// status.json with what it did last, so both its log and its files show
// that it runs.
const fs = require('fs')
const path = require('path')

// Where status.json goes: the app's directory, or WORKER_STATUS_DIR (a
// published release's files are read-only).
const statusDir = process.env.WORKER_STATUS_DIR || '.'

const everyMs = Number(process.env.WORKER_INTERVAL_MS) || 5000
const started = new Date().toISOString()
let runs = 0

function run() {
  runs += 1
  const status = { started, runs, last_run: new Date().toISOString() }
  // Written next to the worker, then renamed: a reader never sees half a
  // file.
  const tmp = path.join(statusDir, 'status.json.tmp')
  fs.writeFileSync(tmp, JSON.stringify(status, null, 2) + '\n')
  fs.renameSync(tmp, path.join(statusDir, 'status.json'))
  console.log(`heartbeat ${runs} at ${status.last_run}`)
}

function stop(signal) {
  console.log(`stopping on ${signal} after ${runs} runs`)
  process.exit(0)
}

process.on('SIGTERM', stop)
process.on('SIGINT', stop)
console.log(`worker started, one run every ${everyMs} ms`)
run()
setInterval(run, everyMs)

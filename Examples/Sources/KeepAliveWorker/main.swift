// A worker thread that sleeps in its loop between jobs and is stopped cleanly at the end.
//
// A run ends as soon as its mode has nothing left to serve: a thread that just calls
// `Loop.current.run()` returns at once, and a thread that has returned cannot be handed work.
// `LoopThread` is the "keep-alive thread" of run-loop lore: its loop holds a source nobody
// signals, so the run never runs out of work, and its thread sleeps in the kernel until a
// block, a message or a timer arrives. `stop()` ends it once the work posted before is done.
//
//   swift run --package-path Examples keep-alive-worker
import Glibc
import RunLoopKit
import Synchronization

let mainThread = pthread_self()
let worker = try LoopThread(name: "worker")

/// Which thread the caller is on, to show where each piece of work runs.
@Sendable func threadName() -> String {
    if pthread_equal(pthread_self(), mainThread) != 0 { return "main" }
    return Loop.currentIfCreated === worker.loop ? "worker" : "another thread"
}

// Why the keep-alive source matters: a run in a mode with nothing in it finishes at once.
// (Shown on the worker, in a run nested in a block, in a mode nobody added anything to.)
worker.perform(waitUntilDone: true) {
    let result = Loop.current.run("empty", timeout: .seconds(10))
    print("[\(threadName())] a run in a mode with nothing in it returns at once: .\(result)")
}

// Blocks: fire and forget, run in the order posted. Posting to a sleeping loop wakes it.
for job in 1...3 {
    worker.perform { print("[\(threadName())] block \(job)") }
}
// Waiting for a block is also how to wait for the ones posted before it (they run in order).
let answer = Mutex<Int>(0)
worker.perform(waitUntilDone: true) { answer.withLock { $0 = 6 * 7 } }
print("[\(threadName())] a waited-for block computed \(answer.withLock { $0 })")

// Messages: a port is a queue any thread sends to; the source made from it receives the
// messages on the worker's thread, in order. The results come back the same way, through a
// port watched by the main thread's loop, which runs until it has them all.
struct Job: Sendable {
    let id: Int
    let numbers: ClosedRange<Int>
}
struct Sum: Sendable {
    let id: Int
    let sum: Int
    let thread: String
}
let jobs = try Loop.Port<Job>()
let results = try Loop.Port<Sum>()
/// The worker's source. Made in a function, not in top-level code: a handler written in
/// top-level code is main-actor code, which only the main loop runs (the worker's loop would
/// refuse it with a message).
func summingSource(jobs: Loop.Port<Job>, results: Loop.Port<Sum>) -> Loop.Source {
    Loop.Source(port: jobs) { job in
        results.send(Sum(id: job.id, sum: job.numbers.reduce(0, +), thread: threadName()))
    }
}
let jobSource = summingSource(jobs: jobs, results: results)
worker.loop.add(jobSource, to: .default)

let mainLoop = Loop.current
let received = Atomic<Int>(0)
let resultSource = Loop.Source(port: results) { result in
    print("[\(threadName())] job \(result.id) summed to \(result.sum) on [\(result.thread)]")
    if received.add(1, ordering: .relaxed).newValue == 3 { mainLoop.stop() }
}
mainLoop.add(resultSource, to: .default)
for id in 1...3 { jobs.send(Job(id: id, numbers: 1...(id * 100))) }
// The timeout only guards against a broken build; the third result stops the run.
let outcome = mainLoop.run(.default, timeout: .seconds(30))
resultSource.invalidate()

// Stopping: the blocks posted before `stop()` still run, then the thread is joined. Nothing
// posted afterwards runs.
worker.perform { print("[\(threadName())] the last block posted before stop() still runs") }
jobSource.invalidate()
worker.stop()
let accepted = worker.perform { print("never printed") }
print("[\(threadName())] worker joined; a block posted after stop() is refused: \(!accepted)")

guard outcome == .stopped, received.load(ordering: .relaxed) == 3, !accepted else {
    print("keep-alive-worker: expected 3 results and a refused block; got \(received.load(ordering: .relaxed))")
    exit(1)
}

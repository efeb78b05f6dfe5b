import Glibc
import RunLoopKit
import Synchronization

// How the fixture reports: a line per measurement on standard output, a `FAILED` line per
// failure on standard error; the exit status is 1 when anything failed.

/// How many checks failed, on any thread.
let failures = Atomic<Int>(0)

func write(_ line: String, to descriptor: Int32) {
    let text = line + "\n"
    _ = text.utf8CString.withUnsafeBufferPointer { Glibc.write(descriptor, $0.baseAddress, $0.count - 1) }
}

func report(_ line: String) { write(line, to: 1) }

func fail(_ message: String) {
    write("FAILED: " + message, to: 2)
    failures.add(1, ordering: .relaxed)
}

/// Fails when `count` exceeds `allowed`.
func check(_ backend: BackendKind, _ what: String, _ count: Int, per items: Int, allowed: Int) {
    report("\(backend) \(what): \(count) allocations for \(items) (allowed: \(allowed))")
    if count > allowed { fail("\(backend) \(what): \(count) allocations for \(items), more than \(allowed)") }
}

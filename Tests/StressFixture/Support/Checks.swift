import Glibc
import Synchronization

// How a scenario reports: each failure is one `FAILED` line on standard error, which the test
// that ran this program turns into one issue; the program then exits with status 1.

private let failures = Atomic<Int>(0)

/// Reports a failure when `condition` is false. Safe from any thread.
func check(_ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
    guard !condition else { return }
    fail(message(), file: file, line: line)
}

/// Reports a failure. Safe from any thread.
func fail(_ message: String, file: StaticString = #fileID, line: UInt = #line) {
    failures.add(1, ordering: .relaxed)
    let flat = message.split(separator: "\n").joined(separator: " ⏎ ")
    writeLine("FAILED (\(file):\(line)): \(flat)", to: 2)
}

/// How many failures were reported so far.
var failureCount: Int { failures.load(ordering: .relaxed) }

/// Writes a line to standard output, unbuffered: a crash later must not lose it.
func report(_ text: String) {
    writeLine(text, to: 1)
}

func writeLine(_ text: String, to descriptor: Int32) {
    let line = text + "\n"
    _ = line.utf8CString.withUnsafeBufferPointer { write(descriptor, $0.baseAddress, $0.count - 1) }
}

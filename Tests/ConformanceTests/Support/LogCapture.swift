import InMemoryLogging
import Logging
import RunLoopKit

/// The records RunLoopKit logs in this test process: the first use replaces ``Loop/logger``
/// with swift-log's in-memory handler, for good (tests run in parallel and share the static
/// logger, so they share one capture and each picks its own records out by their metadata).
///
/// The tests that read what RunLoopKit writes to standard error run in child processes, which
/// keep the default logger.
enum LogCapture {
    private static let handler: InMemoryLogHandler = {
        let handler = InMemoryLogHandler()
        Loop.logger = Logger(label: "runloopkit", factory: { _ in handler })
        return handler
    }()

    /// Installs the capture (once); call before the code under test logs.
    static func install() { _ = handler }

    /// The records whose metadata has `value` under `key`.
    static func records(where key: String, is value: String) -> [InMemoryLogHandler.Entry] {
        handler.entries.filter { $0.metadata[key] == .string(value) }
    }
}

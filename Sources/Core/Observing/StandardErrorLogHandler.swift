import Glibc
import Logging

/// The handler of ``Loop/defaultLogger``: writes each record's message as one line,
/// `RunLoopKit: <message>`, to standard error, exactly the line RunLoopKit wrote before its
/// reports went through swift-log, so that a program that never touches ``Loop/logger`` sees
/// what it always saw.
///
/// Metadata is not written (every report's message already names what the metadata holds);
/// a handler of the user's choice shows it. The line goes out with one `write(2)` and no
/// buffering, so that it is not lost when the process dies right after (Core does not use
/// Foundation or stdio buffers).
struct StandardErrorLogHandler: LogHandler {
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let line = "RunLoopKit: \(event.message)\n"
        _ = line.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
    }
}

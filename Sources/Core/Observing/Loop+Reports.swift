import Logging

/// The reports RunLoopKit makes through ``Loop/logger``: misuse it notices and survives, where
/// trapping would be harsher than the mistake. Each is logged with no lock of the loop held, so
/// that a handler may use the loop.
///
/// The message is the text RunLoopKit wrote to standard error before it used swift-log; the
/// metadata repeats what the message names, as values a log pipeline can filter on.
extension Loop {
    /// The metadata keys of the reports RunLoopKit logs through ``Loop/logger``.
    ///
    /// All values are strings. Which keys each report has is listed in <doc:Logging>.
    public enum ReportKey {
        /// What happened: one of the values of ``Loop/ReportKind``. Every report has it.
        public static let report = "report"
        /// The loop's description, such as `Loop(epoll)` or `Loop(epoll, main)`.
        public static let loop = "loop"
        /// The name of the mode concerned.
        public static let mode = "mode"
        /// The file descriptor concerned, in decimal.
        public static let descriptor = "descriptor"
        /// The source's description, such as `Source(fd 7, readable, order 0)`.
        public static let source = "source"
    }

    /// The values of the ``Loop/ReportKey/report`` metadata key: what a report is about.
    public enum ReportKind {
        /// `run(.common)` was called (contract rule M6); a warning, once per process.
        public static let commonModeRun = "common-mode-run"
        /// A source's descriptor was closed, and maybe reused for another file, while the
        /// source was in a loop (rule D8); an error, and the source is invalidated.
        public static let descriptorClosed = "descriptor-closed"
        /// The backend refused to watch a source's descriptor; an error (with the backend's
        /// error attached), and the source is invalidated.
        public static let cannotWatchDescriptor = "cannot-watch-descriptor"
        /// The main loop's backend refused to watch the dispatch main queue (rule Q1); an error
        /// (with the backend's error attached): the main queue is not served until the loop
        /// registers its descriptors again.
        public static let cannotWatchMainQueue = "cannot-watch-main-queue"
    }

    /// M6: `run(.common)` is a usage error; reported once per process by the caller. A warning:
    /// nothing is lost, the run just returns.
    func reportCommonModeRun() {
        Loop.logger.warning(
            "Loop.run(.common) is a usage error: .common is a set of modes, not a mode; run one of them",
            metadata: [
                ReportKey.report: .string(ReportKind.commonModeRun),
                ReportKey.loop: .string(description),
                ReportKey.mode: .string(Mode.common.name),
            ])
    }

    /// D8 and registration failures: `entry` cannot be watched. An error: a source is
    /// invalidated (its handler will not be called again), or the main queue is not served.
    func report(_ entry: Unwatchable) {
        var metadata: Logger.Metadata = [
            ReportKey.loop: .string(description),
            ReportKey.descriptor: .string("\(entry.descriptor)"),
        ]
        guard let source = entry.source else {
            metadata[ReportKey.report] = .string(ReportKind.cannotWatchMainQueue)
            Loop.logger.error("\(entry.reason)", error: entry.error, metadata: metadata)
            return
        }
        metadata[ReportKey.report] = .string(
            entry.error == nil ? ReportKind.descriptorClosed : ReportKind.cannotWatchDescriptor)
        metadata[ReportKey.source] = .string(source.description)
        Loop.logger.error("\(entry.reason); \(source) is invalidated", error: entry.error, metadata: metadata)
    }
}

extension Loop {
    /// The logger RunLoopKit's reports go through: the misuse it notices but does not trap on
    /// (``Mode/common`` run, a descriptor closed behind its source's back, a source or the
    /// dispatch main queue that cannot be watched). Safe to read and replace from any thread.
    ///
    /// By default it is ``defaultLogger``: each report is one line on standard error,
    /// `RunLoopKit: <message>`, whatever `LoggingSystem.bootstrap` installed. Replace it to send
    /// the reports where the rest of a program's logs go, with their metadata:
    ///
    /// ```swift
    /// import Logging
    /// import RunLoopKit
    ///
    /// LoggingSystem.bootstrap(StreamLogHandler.standardOutput)
    /// Loop.logger = Logger(label: "runloopkit") // through the bootstrapped handler
    /// ```
    ///
    /// A report is logged on the thread that noticed the problem (usually the loop's own
    /// thread, in a pass), with no lock of the loop held; the logger is read once per report.
    /// Each report has the metadata key `report` (what happened) and, when they apply, `loop`,
    /// `mode`, `descriptor` and `source`; see <doc:Logging> for each report's level, message
    /// and metadata.
    public static var logger: Logger {
        get { loggerSlot.withLock { $0 } }
        set { loggerSlot.withLock { $0 = newValue } }
    }

    /// A fresh logger labelled `runloopkit` that writes each record's message to standard error
    /// as one line, `RunLoopKit: <message>`, without metadata: what ``logger`` is until replaced.
    ///
    /// Assign it to ``logger`` to go back to the default. Its level is `info`.
    public static var defaultLogger: Logger {
        Logger(label: "runloopkit", factory: { _ in StandardErrorLogHandler() })
    }
}

/// ``Loop/logger``'s storage. No other lock is taken while it is held (a copy of the logger
/// is taken out, and logged through outside it).
private let loggerSlot = Lock<Logger>(Loop.defaultLogger)

import Logging

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

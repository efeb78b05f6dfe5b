// The wakeup counts before they were a table by reason, kept so that code reading them still
// compiles (with a warning that says what to use instead).
extension Loop.Statistics {
    /// Waits that slept and ended because a timer was due.
    @available(*, deprecated, message: "use wakeups[.timer]")
    public var timerWakeups: UInt64 { wakeups[.timer] }
    /// Waits that slept and ended because a version-1 source was ready.
    @available(*, deprecated, message: "use wakeups[.source]")
    public var sourceWakeups: UInt64 { wakeups[.source] }
    /// Waits that slept and ended because the dispatch main queue had work.
    @available(*, deprecated, message: "use wakeups[.mainQueue]")
    public var mainQueueWakeups: UInt64 { wakeups[.mainQueue] }
    /// Waits that slept and ended because another thread woke the loop.
    @available(*, deprecated, message: "use wakeups[.woken]")
    public var wokenWakeups: UInt64 { wakeups[.woken] }
    /// Waits that slept until the end they were planned with and found nothing to do.
    @available(*, deprecated, message: "use wakeups[.timeout]")
    public var timeoutWakeups: UInt64 { wakeups[.timeout] }
    /// Waits that slept and ended early with no reason.
    @available(*, deprecated, message: "use wakeups[.spurious]")
    public var spuriousWakeups: UInt64 { wakeups[.spurious] }
}

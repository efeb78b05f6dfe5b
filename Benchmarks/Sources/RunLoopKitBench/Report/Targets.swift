/// The project's performance targets (issue 21), checked against this run's results.
///
/// Each target is one line per backend and comparison, marked `met`, `MISS`, or `–` when this
/// run did not measure what the line needs. The targets hold RunLoopKit's own backends (epoll,
/// io_uring, libevent); `info` lines show, with no target, the GLib backend's and the embedded
/// loops' figures against GLib's own, and the figures shown beside a target (re-arm and
/// common-mode timers beside the million timers). Every ratio compares figures of this run.
enum Targets {
    static func render(_ results: Results) -> String {
        var sheet = TargetSheet(results)
        sheet.throughput()
        sheet.wake()
        sheet.pass()
        sheet.timer()
        sheet.idle()
        sheet.scale()
        sheet.mainLoop()
        return
            (sheet.lines + [
                "(ratios are of this run's figures; wakes use the spinning driver; see Benchmarks/README.md)"
            ])
            .joined(separator: "\n")
    }
}

import RunLoopKit

extension TargetSheet {
    /// The main loop costs what any loop costs: on each backend, `Loop.main`'s idle CPU and
    /// one-shot timer lateness within 5 % of the same backend's loop on a thread of its own —
    /// for lateness, the thread loop its child measured in the same rounds
    /// (`MainSubject.besideMain(_:)`); for idle, the thread loop's own child, run just before.
    ///
    /// The target allows max(5 %, the run-to-run spread) over at least five runs: one run
    /// shows its ratio against 1.05, and the spread is read off several runs' sheets.
    mutating func mainLoop() {
        section(
            "main",
            "Loop.main within 1.05× a loop thread's idle CPU and one-shot timer lateness p50, backend by backend (or within the run-to-run spread of ≥ 5 runs)"
        )
        var shown = false
        defer { if !shown { verdict(nil, "main: no main subject measured in this run (--subjects epoll-main …)") } }
        for kind in BackendKind.allCases {
            let thread = Subject.kit(kind).description
            let main = Subject.main(kind).description
            guard results.all.contains(where: { $0.subject == main && ($0.latency != nil || !$0.metrics.isEmpty) })
            else { continue }
            shown = true
            for name in ["loop CPU µs/s", "process CPU µs/s"] {
                if let onMain = metric("idle", "100ms-timer", main, name),
                    let onThread = metric("idle", "100ms-timer", thread, name)
                {
                    let ratio = onMain / max(onThread, 0.001)
                    verdict(
                        ratio <= 1.05,
                        "main/idle \(main): \(name.replacingOccurrences(of: " µs/s", with: "")) \(Self.oneDecimal(onMain)) µs/s = \(Self.times(ratio)) \(thread)'s \(Self.oneDecimal(onThread)) (≤ 1.05×)"
                    )
                } else {
                    verdict(nil, "main/idle \(main): \(name): not measured on both")
                }
            }
            let beside = MainSubject.besideMain(kind)
            if let onMain = latency("timer", "one-shot", main), let onThread = latency("timer", "one-shot", beside) {
                verdict(
                    Double(onMain.p50) <= Double(onThread.p50) * 1.05,
                    "main/timer \(main): one-shot lateness p50 \(Self.µs(onMain.p50)) = \(Self.ratio(onMain.p50, onThread.p50)) \(beside)'s \(Self.µs(onThread.p50)) (≤ 1.05×)"
                )
            } else {
                verdict(nil, "main/timer \(main): not measured on both")
            }
        }
    }

    static func oneDecimal(_ value: Double) -> String { String(format: "%.1f", value) }
}

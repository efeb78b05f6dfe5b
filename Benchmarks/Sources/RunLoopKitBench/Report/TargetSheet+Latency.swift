extension TargetSheet {
    /// Wakes (spinning driver): p50 ≤ 1.2× the floor's and below NIO's, p99 at or below NIO's,
    /// for `perform`, `signal` and descriptor wakes on every backend; the GLib backend's p50
    /// ≤ 1.2× GLib's own loop's (`glib`).
    mutating func wake() {
        guard
            heading(
                "wake",
                "p50 ≤ 1.2× the floor's and below NIO's, p99 at or below NIO's; perform, signal (against NIO's execute: NIO has no signalled source), descriptor; the GLib backend's p50 ≤ 1.2× GLib's own loop's"
            )
        else { return }
        for variant in WakeVariant.targeted.map(\.rawValue) {
            for backend in backends {
                let name = "wake/\(variant) \(backend)"
                guard let wake = latency("wake", variant, backend) else {
                    verdict(nil, "\(name): not measured")
                    continue
                }
                if let (row, label) = reference("wake", variant, "floor", for: backend), let floor = row.latency {
                    let label = label.replacingOccurrences(of: "floor's", with: "the floor's")
                    verdict(
                        Double(wake.p50) <= Double(floor.p50) * 1.2,
                        "\(name): p50 \(Self.µs(wake.p50)) = \(Self.ratio(wake.p50, floor.p50)) \(label) \(Self.µs(floor.p50)) (≤ 1.2×)"
                    )
                } else {
                    verdict(nil, "\(name): against the floor: floor not measured")
                }
                // NIO has no signalled source: a signal is held to NIO's execute (its perform).
                // (A skipped row has no figure: NIO's signal row says why it is not measured.)
                let own = reference("wake", variant, "nio", for: backend).flatMap { $0.row.latency == nil ? nil : $0 }
                let fallback =
                    variant == WakeVariant.signal.rawValue ? reference("wake", "perform", "nio", for: backend) : nil
                if let (row, label) = own ?? fallback, let nio = row.latency {
                    let label = own == nil ? label.replacingOccurrences(of: "nio's", with: "nio's execute") : label
                    verdict(
                        wake.p50 < nio.p50,
                        "\(name): p50 \(Self.µs(wake.p50)) = \(Self.ratio(wake.p50, nio.p50)) \(label) \(Self.µs(nio.p50)) (below)"
                    )
                    verdict(
                        wake.p99 <= nio.p99,
                        "\(name): p99 \(Self.µs(wake.p99)) = \(Self.ratio(wake.p99, nio.p99)) \(label) \(Self.µs(nio.p99)) (at or below)"
                    )
                } else {
                    verdict(nil, "\(name): against NIO: nio not measured")
                }
            }
            // The GLib backend is held to GLib's own minimal loop; an embedded loop is shown.
            let glib = latency("wake", variant, "glib")
            for loop in glibLoops {
                guard let wake = latency("wake", variant, loop) else { continue }
                let text = "wake/\(variant) \(loop): " + Self.against(wake, glib, "glib's")
                guard isGLibBackend(loop) else {
                    info(text)
                    continue
                }
                verdict(glib.map { Double(wake.p50) <= Double($0.p50) * 1.2 }, text + " (p50 ≤ 1.2×)")
            }
        }
    }

    /// One-shot timers: p50 below CF's and NIO's on every backend; none early.
    mutating func timer() {
        guard heading("timer", "one-shot lateness p50 below CF's and NIO's; never early") else { return }
        for backend in backends {
            let name = "timer/one-shot \(backend)"
            guard let timer = latency("timer", "one-shot", backend) else {
                verdict(nil, "\(name): not measured")
                continue
            }
            for other in ["cf", "nio"] {
                guard let (row, label) = reference("timer", "one-shot", other, for: backend), let figure = row.latency
                else {
                    verdict(nil, "\(name): against \(other): \(other) not measured")
                    continue
                }
                verdict(
                    timer.p50 < figure.p50,
                    "\(name): p50 \(Self.µs(timer.p50)) = \(Self.ratio(timer.p50, figure.p50)) \(label) \(Self.µs(figure.p50)) (below)"
                )
            }
            verdict(timer.early == 0, "\(name): \(timer.early) of \(timer.count) fired early (none)")
        }
        let glib = latency("timer", "one-shot", "glib")
        for loop in glibLoops {
            guard let timer = latency("timer", "one-shot", loop) else { continue }
            info("timer/one-shot \(loop): " + Self.against(timer, glib, "glib's") + ", \(timer.early) early")
        }
    }

    /// "p50 A = r× NAME B, p99 C = r× NAME D", or the subject's own figures alone.
    static func against(_ own: LatencySummary, _ reference: LatencySummary?, _ name: String) -> String {
        guard let reference else { return "p50 \(µs(own.p50)), p99 \(µs(own.p99)) (glib not measured)" }
        return "p50 \(µs(own.p50)) = \(ratio(own.p50, reference.p50)) \(name) \(µs(reference.p50)), "
            + "p99 \(µs(own.p99)) = \(ratio(own.p99, reference.p99)) \(name) \(µs(reference.p99))"
    }
}

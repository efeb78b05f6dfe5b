import Foundation

extension TargetSheet {
    /// The empty pass: ≤ 0.12× CF's in the same run.
    mutating func pass() {
        guard heading("pass", "an empty pass (1 source, 1 timer, 1 observer, timeout zero) ≤ 0.12× CF's") else {
            return
        }
        let cf = metric("pass", "empty-poll", "cf", "ns/pass")
        // Not the main subjects: the scenario does not measure the main loop (it says why).
        for backend in backends + glibLoops where Subject(name: backend)?.isMain != true {
            guard let perPass = metric("pass", "empty-poll", backend, "ns/pass") else {
                if backends.contains(backend) { verdict(nil, "pass/empty-poll \(backend): not measured") }
                continue
            }
            let text =
                "pass/empty-poll \(backend): \(String(format: "%.0f ns", perPass))"
                + (cf.map { " = \(Self.times(perPass / $0)) cf's \(String(format: "%.0f ns", $0))" } ?? "")
            if !backends.contains(backend) {
                info(text)
            } else if let cf, cf > 0 {
                verdict(perPass <= cf * 0.12, text + " (≤ 0.12×)")
            } else {
                verdict(nil, text + ": cf not measured")
            }
        }
    }

    /// Idle: the process's CPU time (every thread; a child process per subject) with a 100 ms
    /// repeating timer, at or below NIO's and CF's; the GLib backend and the embedded loops at
    /// most 1.2× GLib's own loop's.
    mutating func idle() {
        guard
            heading(
                "idle",
                "process CPU with a 100 ms timer (every thread counted, each subject alone in a child process) at or below NIO's and CF's; the GLib backend and loops embedded in GLib ≤ 1.2× GLib's own loop's"
            )
        else { return }
        let metricName = "process CPU µs/s"
        func figure(_ subject: String) -> String? {
            guard let cpu = metric("idle", "100ms-timer", subject, metricName) else { return nil }
            let wakeups = metric("idle", "100ms-timer", subject, "wakeups/s") ?? 0
            return String(format: "%.1f µs/s at %.1f wakeups/s", cpu, wakeups)
        }
        for backend in backends {
            guard let cpu = metric("idle", "100ms-timer", backend, metricName), let own = figure(backend) else {
                verdict(nil, "idle \(backend): not measured")
                continue
            }
            for reference in ["nio", "cf"] {
                guard let theirs = metric("idle", "100ms-timer", reference, metricName), let their = figure(reference)
                else {
                    verdict(nil, "idle \(backend): against \(reference): \(reference) not measured")
                    continue
                }
                verdict(
                    cpu <= theirs,
                    "idle \(backend): process CPU \(own) = \(Self.times(cpu / max(theirs, 0.001))) \(reference)'s \(their) (≤ 1×)"
                )
            }
        }
        // The GLib backend and the loops embedded in GLib: at most 1.2× GLib's own loop.
        let glib = metric("idle", "100ms-timer", "glib", metricName)
        for loop in glibLoops {
            guard let cpu = metric("idle", "100ms-timer", loop, metricName), let own = figure(loop) else { continue }
            guard let glib else {
                verdict(nil, "idle \(loop): process CPU \(own): glib not measured")
                continue
            }
            verdict(
                cpu <= glib * 1.2,
                "idle \(loop): process CPU \(own) = \(Self.times(cpu / max(glib, 0.001))) glib's \(figure("glib") ?? "") (≤ 1.2×)"
            )
        }
    }

    /// Scale: a million timers added, half invalidated, the rest fired in ≤ 1 s; re-arm and
    /// common-mode figures beside it.
    mutating func scale() {
        guard
            heading(
                "scale",
                "1 M timers added, half invalidated, the rest fired ≤ 1 s (full run); re-arm and common-mode figures beside it"
            )
        else { return }
        // Not the main subjects: the scenario does not measure the main loop (it says why).
        for backend in backends + glibLoops where Subject(name: backend)?.isMain != true {
            let targeted = backends.contains(backend)
            let runs = results.all.filter {
                $0.scenario == "scale" && $0.subject == backend && $0.variant.hasPrefix("timers-")
                    && !$0.variant.hasSuffix("-default") && !$0.variant.hasSuffix("-common")
                    && $0.metric("total ms") != nil
            }
            guard let big = runs.last, let total = big.metric("total ms") else {
                if targeted { verdict(nil, "scale/timers \(backend): not measured") }
                continue
            }
            let wrongly = big.metric("fired wrongly") ?? 0
            let million = big.variant == "timers-1000000"
            var text = String(format: "scale/%@ %@: %.0f ms", big.variant, backend, total)
            text += million ? " = \(Self.times(total / 1000)) 1 s (≤ 1×)" : " (1 M timers ≤ 1 s: a full run checks)"
            text += wrongly == 0 ? ", no invalidated timer fired" : String(format: ", %.0f invalidated fired", wrongly)
            if targeted {
                verdict(million ? total <= 1000 && wrongly == 0 : nil, text)
            } else {
                info(text)
            }
            if runs.count == 2, let small = runs.first {
                let growth = ["add", "invalidate", "fire"].compactMap { phase -> String? in
                    guard let a = small.metric("\(phase) ns/timer"), let b = big.metric("\(phase) ns/timer"), a > 0
                    else { return nil }
                    return String(format: "%@ %.0f ns %.2f×", phase, b, b / a)
                }
                info(
                    "  \(backend) per timer at \(big.variant), × its cost at \(small.variant): "
                        + growth.joined(separator: ", "))
            }
            if let rearm = results.all.first(where: {
                $0.scenario == "scale" && $0.subject == backend && $0.variant.hasPrefix("rearm-")
            }), let growth = rearm.metric("RSS growth KB") {
                info(
                    String(
                        format: "  %@ %@: %.0f ns per re-arm, resident memory %+.0f KB", backend, rearm.variant,
                        rearm.metric("ns/re-arm") ?? 0, growth))
            }
            if let plain = metric("scale", "timers-20000-default", backend, "total ms"),
                let common = metric("scale", "timers-20000-common", backend, "total ms"), plain > 0
            {
                info(
                    String(
                        format: "  %@ 20,000 timers in .common %.1f ms = %.2f× in .default %.1f ms", backend, common,
                        common / plain, plain))
            }
        }
    }
}

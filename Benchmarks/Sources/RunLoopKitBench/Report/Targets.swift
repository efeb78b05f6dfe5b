import Foundation

/// The project's performance targets, checked against this run's results.
enum Targets {
    static func render(_ results: Results) -> String {
        var lines = ["== targets"]
        func verdict(_ ok: Bool?, _ text: String) {
            lines.append("  [\(ok.map { $0 ? "met " : "MISS" } ?? " –  ")] \(text)")
        }
        let backends = Array(Set(results.all.map(\.subject)).filter { !$0.hasPrefix("floor") && $0 != "cf" && $0 != "all" }).sorted()
        for variant in WakeVariant.allCases.map(\.rawValue) {
            guard let floor = results.find("wake", variant, "floor")?.latency?.p50 else { continue }
            let cf = results.find("wake", variant, "cf")?.latency?.p50
            for backend in backends {
                guard let p50 = results.find("wake", variant, backend)?.latency?.p50 else { continue }
                let vsFloor = Double(p50) / Double(floor)
                let vsCF = cf.map { Double(p50) / Double($0) }
                verdict(vsFloor <= 1.25 && (vsCF.map { $0 <= 0.5 } ?? true),
                        String(format: "wake/%@ %@: p50 %.2f× floor (≤ 1.25×), %@ cf (≤ 0.50×)", variant, backend, vsFloor, vsCF.map { String(format: "%.2f×", $0) } ?? "–"))
            }
        }
        let timerFloor = results.all.filter { $0.scenario == "timer" && $0.variant == "one-shot" && $0.subject.hasPrefix("floor") && $0.subject != "floor-pwait2-slack1" }
            .compactMap(\.latency?.p50).min()
        let timerCF = results.find("timer", "one-shot", "cf")?.latency?.p50
        for backend in backends {
            guard let timer = results.find("timer", "one-shot", backend)?.latency, let timerFloor else { continue }
            let ratio = Double(timer.p50) / Double(timerFloor)
            verdict(ratio <= 1.2 && timer.early == 0 && (timerCF.map { timer.p50 < $0 } ?? true),
                    String(format: "timer %@: p50 %.1f µs = %.2f× best floor (≤ 1.2×), cf %@, early %llu", backend, Double(timer.p50) / 1e3, ratio,
                           timerCF.map { String(format: "%.1f µs", Double($0) / 1e3) } ?? "–", timer.early))
        }
        for backend in backends {
            guard let with = results.find("coalescing", "tolerance-5ms", backend)?.metric("wakeups/s"),
                  let without = results.find("coalescing", "tolerance-0ms", backend)?.metric("wakeups/s"), without > 0 else { continue }
            verdict(with <= without / 5, String(format: "coalescing %@: %.0f vs %.0f wakeups/s = 1/%.1f (≤ 1/5)", backend, with, without, without / max(with, 1)))
        }
        for backend in backends {
            guard let rate = results.find("throughput", "1-thread", backend)?.metric("blocks/s") else { continue }
            let lost = (results.find("throughput", "1-thread", backend)?.metric("lost") ?? 0) + (results.find("throughput", "4-thread", backend)?.metric("lost") ?? 0)
            verdict(rate >= 10e6 && lost == 0, String(format: "throughput %@: %.2fM blocks/s from one poster (≥ 10M), %.0f lost", backend, rate / 1e6, lost))
        }
        let idleCF = results.find("idle", "100ms-timer", "cf")?.metric("loop CPU µs/s")
        for backend in backends {
            guard let cpu = results.find("idle", "100ms-timer", backend)?.metric("loop CPU µs/s") else { continue }
            let wakeups = results.find("idle", "100ms-timer", backend)?.metric("wakeups/s") ?? 0
            verdict(idleCF.map { cpu <= $0 * 1.1 } , String(format: "idle %@: %.1f µs CPU/s vs cf %@, %.1f wakeups/s", backend, cpu,
                                                          idleCF.map { String(format: "%.1f", $0) } ?? "–", wakeups))
        }
        for backend in backends {
            // The N/10 and N runs (the common-mode comparison below has its own suffix).
            let runs = results.all.filter {
                $0.scenario == "scale" && $0.variant.hasPrefix("timers-") && !$0.variant.hasSuffix("default")
                    && !$0.variant.hasSuffix("common") && $0.subject == backend
            }
            guard let big = runs.last, let total = big.metric("total ms") else { continue }
            var growth = ""
            if runs.count == 2, let small = runs.first {
                let ratios = ["add", "invalidate", "fire"].compactMap { phase -> String? in
                    guard let a = small.metric("\(phase) ns/timer"), let b = big.metric("\(phase) ns/timer"), a > 0 else { return nil }
                    return String(format: "%@ %.2f×", phase, b / a)
                }
                growth = "; per-timer cost ×10 items: " + ratios.joined(separator: ", ")
            }
            verdict(big.variant == "timers-1000000" ? total < 1000 : nil, String(format: "scale %@ %@: %.0f ms (< 1000 ms for 1M)%@", backend, big.variant, total, growth))
        }
        for backend in backends {
            guard let plain = results.find("scale", "timers-20000-default", backend)?.metric("total ms"),
                  let common = results.find("scale", "timers-20000-common", backend)?.metric("total ms"), plain > 0 else { continue }
            verdict(common <= plain * 1.5, String(format: "scale %@: 20,000 timers in .common %.1f ms, in .default %.1f ms: %.2f× (≤ 1.5×)",
                                                  backend, common, plain, common / plain))
        }
        let cfPass = results.find("pass", "empty-poll", "cf")?.metric("ns/pass")
        for backend in backends {
            guard let perPass = results.find("pass", "empty-poll", backend)?.metric("ns/pass") else { continue }
            verdict(perPass <= 150, String(format: "pass %@: %.0f ns per empty pass (≤ 150 ns), cf %@", backend, perPass,
                                           cfPass.map { String(format: "%.0f ns", $0) } ?? "–"))
        }
        lines.append("  (idle allows 10% over CF for measurement noise; ratios are of p50s)")
        return lines.joined(separator: "\n")
    }
}

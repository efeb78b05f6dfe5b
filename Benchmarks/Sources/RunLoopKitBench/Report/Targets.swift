import Foundation
import RunLoopKit

/// The project's performance targets, checked against this run's results: one line per target
/// and backend, marked met, MISS, or – when this run did not measure what it needs.
enum Targets {
    static func render(_ results: Results) -> String {
        var lines = ["== targets"]
        func verdict(_ ok: Bool?, _ text: String) {
            lines.append("  [\(ok.map { $0 ? "met " : "MISS" } ?? " –  ")] \(text)")
        }
        let measured = Set(results.all.map(\.subject))
        // RunLoopKit's loops: every backend, and every loop embedded in another.
        let backends = Subject.all.filter(\.isKitLoop).map(\.description).filter(measured.contains)
        func µs(_ nanoseconds: UInt64) -> String { Table.micros(nanoseconds) + " µs" }
        func ratio(_ a: UInt64, _ b: UInt64) -> String { String(format: "%.2f×", Double(a) / Double(max(b, 1))) }

        // Timers: one-shot lateness against the best floor, CF and NIO.
        let floors = results.all.filter {
            $0.scenario == "timer" && $0.variant == "one-shot" && $0.subject.hasPrefix("floor")
                && $0.subject != "floor-pwait2-slack1"
        }.compactMap(\.latency)
        let floorP50 = floors.map(\.p50).min()
        let floorMin = floors.map(\.min).min()
        let references = ["cf", "nio"].compactMap { name in
            results.find("timer", "one-shot", name)?.latency.map { (name, $0) }
        }
        for backend in backends {
            guard let timer = results.find("timer", "one-shot", backend)?.latency else { continue }
            if let floorP50 {
                verdict(
                    Double(timer.p50) <= Double(floorP50) * 1.2,
                    "timer \(backend): p50 \(µs(timer.p50)) = \(ratio(timer.p50, floorP50)) the best timer floor's \(µs(floorP50)) (≤ 1.20×)"
                )
            }
            for (name, reference) in references {
                verdict(
                    timer.p50 < reference.p50,
                    "timer \(backend): p50 \(µs(timer.p50)) = \(ratio(timer.p50, reference.p50)) \(name)'s \(µs(reference.p50)) (below)"
                )
                verdict(
                    timer.p99 <= reference.p99,
                    "timer \(backend): p99 \(µs(timer.p99)) = \(ratio(timer.p99, reference.p99)) \(name)'s \(µs(reference.p99)) (at or below)"
                )
            }
            verdict(timer.early == 0, "timer \(backend): \(timer.early) of \(timer.count) fired early (none)")
            if let floorMin {
                let over = Int64(timer.min) - Int64(floorMin)
                verdict(
                    over <= 3_000,
                    String(
                        format: "timer %@: least lateness %@ = floor's least %@ %@ %.1f µs (within 3 µs)",
                        backend, µs(timer.min), µs(floorMin), over < 0 ? "−" : "+", Double(abs(over)) / 1e3))
            }
        }

        // Wakes, spinning driver: against the floor and NIO.
        for variant in WakeVariant.targeted.map(\.rawValue) {
            let floor = results.find("wake", variant, "floor")?.latency
            // NIO has no signalled source: `signal` is held to NIO's `execute`, its one way to hand
            // work to its loop from another thread. NIO does not serve the main queue, and the
            // main queue's own floor sits above a plain wake, so `dispatch-main` has no NIO target.
            let nioOwn = results.find("wake", variant, "nio")?.latency
            let nio =
                variant == WakeVariant.dispatchMain.rawValue
                ? nil : nioOwn ?? results.find("wake", "perform", "nio")?.latency
            let nioName = nioOwn == nil ? "nio's execute" : "nio's"
            if variant == WakeVariant.dispatchMain.rawValue, !backends.isEmpty, measured.contains("nio") {
                verdict(nil, "wake/\(variant): no NIO comparison (NIO does not serve DispatchQueue.main)")
            }
            for backend in backends {
                guard let wake = results.find("wake", variant, backend)?.latency else { continue }
                if let floor {
                    verdict(
                        Double(wake.p50) <= Double(floor.p50) * 1.25,
                        "wake/\(variant) \(backend): p50 \(µs(wake.p50)) = \(ratio(wake.p50, floor.p50)) the floor's \(µs(floor.p50)) (≤ 1.25×)"
                    )
                }
                if let nio {
                    verdict(
                        wake.p50 < nio.p50,
                        "wake/\(variant) \(backend): p50 \(µs(wake.p50)) = \(ratio(wake.p50, nio.p50)) \(nioName) \(µs(nio.p50)) (below)"
                    )
                    verdict(
                        wake.p99 <= nio.p99,
                        "wake/\(variant) \(backend): p99 \(µs(wake.p99)) = \(ratio(wake.p99, nio.p99)) \(nioName) \(µs(nio.p99)) (at or below)"
                    )
                }
            }
        }

        // Pass cost.
        let cfPass = results.find("pass", "empty-poll", "cf")?.metric("ns/pass")
        for backend in backends {
            guard let perPass = results.find("pass", "empty-poll", backend)?.metric("ns/pass") else { continue }
            verdict(
                perPass <= 150,
                String(
                    format: "pass %@: %.0f ns per empty pass (≤ 150 ns; cf %@)", backend, perPass,
                    cfPass.map { String(format: "%.0f ns", $0) } ?? "–"))
        }

        // Throughput.
        for backend in backends {
            let one = results.find("throughput", "1-thread", backend)
            let inModes = results.find("throughput", "1-thread-in-modes", backend)
            let four = results.find("throughput", "4-thread", backend)
            for (row, what) in [(one, "perform { }"), (inModes, "perform(in:)")] {
                guard let rate = row?.metric("blocks/s") else { continue }
                let lost = row?.metric("lost") ?? 0
                verdict(
                    rate >= 10e6 && lost == 0,
                    String(
                        format: "throughput %@: %.2fM blocks/s from one poster with %@ = %.2f× 10M (≥ 1×), %.0f lost",
                        backend, rate / 1e6, what, rate / 10e6, lost))
            }
            if let rate1 = one?.metric("blocks/s"), let rate4 = four?.metric("blocks/s"), rate1 > 0 {
                let lost = four?.metric("lost") ?? 0
                verdict(
                    rate4 >= rate1 && lost == 0,
                    String(
                        format: "throughput %@: 4 posters %.2fM blocks/s = %.2f× one poster (≥ 1×), %.0f lost",
                        backend, rate4 / 1e6, rate4 / rate1, lost))
            }
        }

        // Idle cost against CF at the same wakeup count.
        let idleCF = results.find("idle", "100ms-timer", "cf")
        for backend in backends {
            guard let idle = results.find("idle", "100ms-timer", backend), let cpu = idle.metric("loop CPU µs/s") else {
                continue
            }
            let wakeups = idle.metric("wakeups/s") ?? 0
            guard let cfCPU = idleCF?.metric("loop CPU µs/s"), cfCPU > 0 else {
                verdict(
                    nil,
                    String(format: "idle %@: %.1f µs CPU/s at %.1f wakeups/s (cf not measured)", backend, cpu, wakeups))
                continue
            }
            verdict(
                cpu <= cfCPU,
                String(
                    format: "idle %@: %.1f µs CPU/s at %.1f wakeups/s = %.2f× cf's %.1f at %.1f (≤ 1×)",
                    backend, cpu, wakeups, cpu / cfCPU, cfCPU, idleCF?.metric("wakeups/s") ?? 0))
        }

        // Scale.
        for backend in backends {
            // The N/10 and N runs (the common-mode comparison below has its own suffix).
            let runs = results.all.filter {
                $0.scenario == "scale" && $0.variant.hasPrefix("timers-") && !$0.variant.hasSuffix("default")
                    && !$0.variant.hasSuffix("common") && $0.subject == backend
            }
            if let big = runs.last, let total = big.metric("total ms") {
                var growth = ""
                if runs.count == 2, let small = runs.first {
                    let ratios = ["add", "invalidate", "fire"].compactMap { phase -> String? in
                        guard let a = small.metric("\(phase) ns/timer"), let b = big.metric("\(phase) ns/timer"), a > 0
                        else { return nil }
                        return String(format: "%@ %.2f×", phase, b / a)
                    }
                    growth = "; per-timer cost ×10 timers: " + ratios.joined(separator: ", ")
                }
                let million = big.variant == "timers-1000000"
                verdict(
                    million ? total <= 1000 : nil,
                    String(
                        format: "scale %@ %@: %.0f ms%@ (1M timers ≤ 1000 ms%@)%@", backend, big.variant, total,
                        million ? String(format: " = %.2f× 1 s", total / 1000) : "",
                        million ? "" : "; run without --quick to check", growth))
            }
            if let plain = results.find("scale", "timers-20000-default", backend)?.metric("total ms"),
                let common = results.find("scale", "timers-20000-common", backend)?.metric("total ms"), plain > 0
            {
                verdict(
                    common <= plain * 1.5,
                    String(
                        format: "scale %@: 20,000 timers in .common %.1f ms = %.2f× in .default %.1f ms (≤ 1.5×)",
                        backend, common, common / plain, plain))
            }
            let few = results.find("scale", "pass-100-fds", backend)?.metric("ns/pass")
            let many = results.all.first {
                $0.scenario == "scale" && $0.subject == backend && $0.variant.hasPrefix("pass-")
                    && $0.variant != "pass-100-fds"
            }
            if let few, let many, let perPass = many.metric("ns/pass"), few > 0 {
                let count = many.variant.dropFirst("pass-".count).prefix { $0.isNumber }
                verdict(
                    perPass <= few * 1.5,
                    String(
                        format: "scale %@: a pass with %@ idle descriptors %.0f ns = %.2f× with 100, %.0f ns (≤ 1.5×)",
                        backend, String(count), perPass, perPass / few, few))
            }
            if let rearm = results.all.first(where: {
                $0.scenario == "scale" && $0.subject == backend && $0.variant.hasPrefix("rearm-")
            }),
                let growth = rearm.metric("RSS growth KB")
            {
                let times = rearm.variant.dropFirst("rearm-".count)
                verdict(
                    growth < 1024,
                    String(
                        format:
                            "scale %@: one timer re-armed %@ times grew resident memory %.0f KB = %.2f× 1 MB (< 1×)",
                        backend, String(times), growth, growth / 1024))
            }
        }
        lines.append("  (ratios are of this run's figures; wakes use the spinning driver; see Benchmarks/README.md)")
        return lines.joined(separator: "\n")
    }
}

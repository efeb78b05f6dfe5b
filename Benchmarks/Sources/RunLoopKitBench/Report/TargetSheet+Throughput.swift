extension TargetSheet {
    /// Throughput: one poster ≥ 10 M blocks/s with `perform { }` and with a mode set, and
    /// ≥ 0.5× the C floor's one poster; 4 posters ≥ one poster; nothing lost.
    mutating func throughput() {
        guard
            heading(
                "throughput",
                "one poster ≥ 10 M blocks/s with perform { } and with perform(in:), and ≥ 0.5× the C floor's one poster; 4 posters ≥ one poster; none lost"
            )
        else { return }
        for backend in backends {
            let floorRow = reference("throughput", "1-thread", "floor", for: backend)
            let floor = floorRow?.row.metric("blocks/s")
            let floorLabel = (floorRow?.label ?? "floor's").replacingOccurrences(of: "floor's", with: "the C floor's")
            for (variant, what) in [("1-thread", "perform { }"), ("1-thread-in-modes", "perform(in: [.default])")] {
                guard let rate = metric("throughput", variant, backend, "blocks/s") else {
                    verdict(nil, "throughput/\(variant) \(backend): not measured")
                    continue
                }
                let lost = metric("throughput", variant, backend, "lost") ?? 0
                verdict(
                    rate >= 10e6 && lost == 0,
                    "throughput/\(variant) \(backend): \(Self.millions(rate)) blocks/s with \(what) = \(Self.times(rate / 10e6)) 10 M (≥ 1×), \(Self.lost(lost))"
                )
                if let floor, floor > 0 {
                    verdict(
                        rate >= floor * 0.5,
                        "throughput/\(variant) \(backend): \(Self.millions(rate)) = \(Self.times(rate / floor)) \(floorLabel) \(Self.millions(floor)) (≥ 0.5×)"
                    )
                } else {
                    verdict(nil, "throughput/\(variant) \(backend): against the C floor: floor not measured")
                }
            }
            if let one = metric("throughput", "1-thread", backend, "blocks/s"),
                let four = metric("throughput", "4-thread", backend, "blocks/s"), one > 0
            {
                let lost = metric("throughput", "4-thread", backend, "lost") ?? 0
                verdict(
                    four >= one && lost == 0,
                    "throughput/4-thread \(backend): \(Self.millions(four)) blocks/s = \(Self.times(four / one)) one poster's \(Self.millions(one)) (≥ 1×), \(Self.lost(lost))"
                )
            } else {
                verdict(nil, "throughput/4-thread \(backend): not measured")
            }
        }
        for loop in glibLoops {
            let parts = [("1-thread", "1-thread"), ("1-thread-in-modes", "1-thread"), ("4-thread", "4-thread")]
                .compactMap { variant, reference -> String? in
                    guard let rate = metric("throughput", variant, loop, "blocks/s") else { return nil }
                    let glib = metric("throughput", reference, "glib", "blocks/s")
                    let against =
                        glib.map { " = \(Self.times(rate / $0)) glib's \(reference) \(Self.millions($0))" } ?? ""
                    return "\(variant) \(Self.millions(rate))\(against)"
                }
            if !parts.isEmpty { info("throughput \(loop) (blocks/s): " + parts.joined(separator: "; ")) }
        }
    }
}

import RunLoopKit

/// How long to wait before each retry: a delay that grows exponentially from `base` by
/// `multiplier` at each failure, up to `cap`, with jitter so that clients that failed together
/// do not retry together.
///
/// The ceiling before retry `n` (after `n` failures) is `base × multiplierⁿ⁻¹`, at most `cap`;
/// the delay is drawn under it as ``Jitter-swift.enum`` says. The random part is
/// `Int64.random(in:using:)` over nanoseconds, drawn from the generator given, one draw per
/// delay: a test that seeds the generator can compute each delay.
///
/// A value: safe to share between threads.
public struct Backoff: Sendable, Hashable {
    /// How a delay is drawn under its ceiling.
    public enum Jitter: Sendable, Hashable {
        /// No jitter: the delay is the ceiling. No random draw.
        case none
        /// "Full jitter": a delay drawn uniformly from zero to the ceiling (both included).
        case full
        /// "Equal jitter": half the ceiling, plus a part drawn uniformly from zero to the other
        /// half (both included): never less than half the ceiling.
        case equal
    }

    /// The first retry's ceiling.
    public let base: Duration
    /// What each failure multiplies the ceiling by; at least 1.
    public let multiplier: Double
    /// The largest ceiling.
    public let cap: Duration
    /// How a delay is drawn under its ceiling.
    public let jitter: Jitter

    /// A back-off from `base`, multiplied by `multiplier` at each failure, capped at `cap`.
    ///
    /// - Throws: `ArgumentError` naming `base` (negative), `multiplier` (below 1, or not finite)
    ///   or `cap` (below `base`).
    public init(base: Duration, multiplier: Double = 2, cap: Duration, jitter: Jitter = .full) throws(ArgumentError) {
        guard base >= .zero else {
            throw ArgumentError(argument: "base", value: "\(base)", reason: "a delay must not be negative")
        }
        guard multiplier.isFinite, multiplier >= 1 else {
            throw ArgumentError(
                argument: "multiplier", value: "\(multiplier)", reason: "a multiplier must be finite and at least 1")
        }
        guard cap >= base else {
            throw ArgumentError(argument: "cap", value: "\(cap)", reason: "the cap must not be below base, \(base)")
        }
        self.base = base
        self.multiplier = multiplier
        self.cap = cap
        self.jitter = jitter
    }

    /// The ceiling of the delay before the retry that follows `failures` failures (at least 1):
    /// `base × multiplierᶠᵃⁱˡᵘʳᵉˢ⁻¹`, at most ``cap``.
    public func ceiling(afterFailures failures: Int) -> Duration {
        var ceiling = base
        // Capped at each step, so the product never overflows however many failures.
        for _ in 1..<max(failures, 1) {
            guard ceiling < cap else { break }
            ceiling = min(ceiling * multiplier, cap)
        }
        return ceiling
    }

    /// The delay before the retry that follows `failures` failures: its ceiling, with jitter
    /// drawn from `generator` (no draw for ``Jitter-swift.enum/none``).
    public func delay(afterFailures failures: Int, using generator: inout some RandomNumberGenerator) -> Duration {
        let ceiling = Self.nanoseconds(ceiling(afterFailures: failures))
        switch jitter {
        case .none:
            return .nanoseconds(ceiling)
        case .full:
            return .nanoseconds(Int64.random(in: 0...ceiling, using: &generator))
        case .equal:
            let half = ceiling / 2
            return .nanoseconds(half + Int64.random(in: 0...(ceiling - half), using: &generator))
        }
    }

    /// `duration` in whole nanoseconds (rounded down; saturating past 292 years).
    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return .max }
        let (sum, sumOverflow) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        return sumOverflow ? .max : sum
    }
}

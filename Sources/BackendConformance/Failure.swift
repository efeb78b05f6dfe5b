extension BackendConformance {
    /// A check that did not pass: which one, what it expected, and what happened instead.
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// The check's name.
        public let check: String
        /// What the backend should have done.
        public let expected: String
        /// What it did.
        public let observed: String

        /// Creates a failure of `check`.
        public init(check: String, expected: String, observed: String) {
            self.check = check
            self.expected = expected
            self.observed = observed
        }

        /// `<check>: expected <expected>; observed <observed>`.
        public var description: String { "\(check): expected \(expected); observed \(observed)" }
    }
}

/// What a check's body throws when the backend did something else than it expected; the
/// check's ``BackendConformance/Check/run(_:deadline:stressScale:)`` names the check.
struct Mismatch: Error {
    let expected: String
    let observed: String
}

/// Throws a ``Mismatch`` unless `condition` holds.
func expect(_ condition: Bool, _ expected: @autoclosure () -> String, observed: @autoclosure () -> String) throws {
    guard condition else { throw Mismatch(expected: expected(), observed: observed()) }
}

import RunLoopCore

extension BackendConformance {
    /// One named check of a backend.
    ///
    /// A value: pass it around, list it, run it as often as you like. Its `name` is stable
    /// and unique among ``BackendConformance/checks`` (it is also its `id`), so a test
    /// framework can name and select test cases by it.
    public struct Check: Sendable, Identifiable, CustomStringConvertible {
        /// What the check verifies, as a sentence.
        public let name: String
        private let body: @Sendable (Context) throws -> Void

        init(_ name: String, _ body: @escaping @Sendable (Context) throws -> Void) {
            self.name = name
            self.body = body
        }

        /// The `name`.
        public var id: String { name }
        /// The `name`.
        public var description: String { name }

        /// Runs the check against backends made by `factory`, on a thread of its own, and
        /// returns when it passed.
        ///
        /// Every backend and loop the check makes is released before this returns (the loop
        /// checks' threads are joined), except after a check that hung (see below). Safe to
        /// call from any thread, and for several checks at once.
        ///
        /// - Parameters:
        ///   - factory: makes the backend under test; called once or more per check.
        ///   - deadline: how long to wait for an event that must come before failing; a
        ///     check still running after four times this has hung, and fails (its thread is
        ///     left behind, blocked in the backend).
        /// - Throws: ``Failure`` naming this check, what was expected and what happened.
        public func run(_ factory: BackendFactory, deadline: Duration = BackendConformance.defaultDeadline) throws {
            let context = Context(factory: factory, deadline: deadline)
            do {
                try onOwnThread(limit: deadline * 4) { try body(context) }
            } catch let mismatch as Mismatch {
                throw Failure(check: name, expected: mismatch.expected, observed: mismatch.observed)
            } catch let failure as Failure {
                throw failure
            } catch {
                throw Failure(check: name, expected: "no error", observed: "it threw \(error)")
            }
        }
    }

    /// What a check's body is given.
    struct Context: Sendable {
        let factory: BackendFactory
        let deadline: Duration
    }
}

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
        /// `nil` when the check applies to a backend; otherwise why not (it then passes once
        /// this has checked the backend's answer).
        private let notApplicable: (@Sendable (any Backend) throws -> String?)?

        init(
            _ name: String, _ body: @escaping @Sendable (Context) throws -> Void,
            appliesTo notApplicable: (@Sendable (any Backend) throws -> String?)? = nil
        ) {
            self.name = name
            self.notApplicable = notApplicable
            guard let notApplicable else {
                self.body = body
                return
            }
            self.body = { context in
                // A backend that does not offer what the check is about passes, its answer
                // checked by `notApplicable` (a typed `unsupported` with a reason).
                if try notApplicable(Subject(context).backend) == nil { try body(context) }
            }
        }

        /// Why this check does not apply to the backends `factory` makes (say, a backend that
        /// offers no host descriptor, for the embedding checks), for a test runner to report it
        /// as skipped; `nil` when it applies. ``run(_:deadline:stressScale:)`` passes a check that does
        /// not apply once it has checked the backend's answer, so a runner need not call this.
        ///
        /// - Throws: ``Failure`` when the factory cannot make a backend, or the backend's
        ///   answer is malformed (an `unsupported` embedding without a reason).
        public func skipReason(for factory: BackendFactory) throws -> String? {
            guard let notApplicable else { return nil }
            do {
                return try notApplicable(Subject(Context(factory: factory, deadline: .zero)).backend)
            } catch let mismatch as Mismatch {
                throw Failure(check: name, expected: mismatch.expected, observed: mismatch.observed)
            }
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
        ///   - stressScale: the fraction of its full size a stress check makes (the wake race's
        ///     3,000 pokes), never below a tenth: a run under a sanitizer, many times slower,
        ///     passes 0.1 so that it ends well within the check's limit.
        /// - Throws: ``Failure`` naming this check, what was expected and what happened.
        public func run(
            _ factory: BackendFactory, deadline: Duration = BackendConformance.defaultDeadline,
            stressScale: Double = 1
        ) throws {
            let context = Context(factory: factory, deadline: deadline, stressScale: max(0.1, min(1, stressScale)))
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
        /// The fraction of its full size a stress check makes (0.1 to 1).
        var stressScale: Double = 1
    }
}

import RunLoopKit
import Synchronization

/// A backend with no kernel in it: a wait lets the virtual clock run for its whole timeout
/// (at once), or returns at once when a wake is pending. It watches no descriptor: programs
/// use version-0 sources only.
///
/// A wait without a timeout would sleep forever: the backend calls ``onEndlessWait`` (the
/// harness stops the loop from there, as another thread would, which wakes this wait) and
/// returns. What should never happen (the loop still waiting without a timeout after that, a
/// run that keeps waiting without end, a descriptor call) is recorded as a problem, which the
/// harness puts in the trace; time then jumps an hour, so every timed run ends and the test
/// reports.
final class ScriptedBackend: Backend {
    let kind = BackendKind.default
    private let clock: VirtualClock
    private let scriptedWaker = ScriptedWaker()
    /// Called, on the loop's thread, when the loop waits without a timeout.
    var onEndlessWait: () -> Void = {}
    /// Touched only on the loop's thread.
    private var problems: [String] = []
    private var waitsThisStep = 0
    private var endlessWaitsThisStep = 0
    private static let waitsPerStepLimit = 100_000
    private static let endlessWaitsPerStepLimit = 1_000

    init(clock: VirtualClock) { self.clock = clock }

    var waker: any BackendWaker { scriptedWaker }

    func register(_ descriptor: Int32, token: Token, interest: Interest) throws(SystemError) {
        problems.append("backend: register(\(descriptor)) on a backend that watches no descriptor")
    }

    func modify(_ descriptor: Int32, token: Token, interest: Interest) throws(SystemError) {
        problems.append("backend: modify(\(descriptor)) on a backend that watches no descriptor")
    }

    func unregister(_ descriptor: Int32, token: Token) throws(SystemError) {
        problems.append("backend: unregister(\(descriptor)) on a backend that watches no descriptor")
    }

    func wait(timeout: Duration?, into events: inout [ReadyEvent]) throws(SystemError) -> Bool {
        events.removeAll()
        if scriptedWaker.consume() { return true }
        waitsThisStep += 1
        if waitsThisStep == Self.waitsPerStepLimit {
            problems.append("backend: more than \(Self.waitsPerStepLimit) waits in one step (a run that never ends)")
        }
        guard waitsThisStep < Self.waitsPerStepLimit else {
            clock.advance(by: .seconds(3600))
            return false
        }
        guard let timeout else {
            endlessWaitsThisStep += 1
            if endlessWaitsThisStep == Self.endlessWaitsPerStepLimit {
                problems.append(
                    "backend: the loop keeps waiting without a timeout at \(clock.formattedNow), though stopped")
            }
            onEndlessWait()
            return scriptedWaker.consume()
        }
        if timeout > .zero { clock.advance(by: timeout) }
        return false
    }

    /// Called by the harness between steps: returns and forgets the problems so far.
    func takeProblems() -> [String] {
        waitsThisStep = 0
        endlessWaitsThisStep = 0
        defer { problems = [] }
        return problems
    }
}

/// Records wakes; the next wait consumes them and returns at once.
final class ScriptedWaker: BackendWaker {
    private let pending = Atomic<Bool>(false)

    func wake() { pending.store(true, ordering: .releasing) }

    func consume() -> Bool { pending.exchange(false, ordering: .acquiringAndReleasing) }
}

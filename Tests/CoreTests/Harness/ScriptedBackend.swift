import Glibc
import RunLoopKit
import Synchronization

/// A backend with no kernel in it: a wait lets the virtual clock run for its whole timeout
/// (at once), or returns at once when a wake is pending or a registered descriptor is ready.
///
/// Descriptors are real (the harness's pipes, so that Core's checks of a descriptor's file
/// hold), but their readiness is scripted: the program says when a descriptor becomes ready
/// and for what (``setReadiness(_:of:)``), and every wait reports it, under the token it was
/// registered with, until the program clears it (level-triggered, as the real backends are):
/// what was asked for, hang-ups and errors whatever was asked.
///
/// A wait without a timeout would sleep forever: the backend calls ``onEndlessWait`` (the
/// harness stops the loop from there, as another thread would, which wakes this wait) and
/// returns. What should never happen (the loop still waiting without a timeout after that, a
/// run that keeps waiting without end, a descriptor registered twice or for no interest) is
/// recorded as a problem, which the harness puts in the trace; time then jumps an hour, so
/// every timed run ends and the test reports.
final class ScriptedBackend: Backend {
    let kind = BackendKind.default
    private let clock: VirtualClock
    private let scriptedWaker = ScriptedWaker()
    /// Called, on the loop's thread, when the loop waits without a timeout.
    var onEndlessWait: () -> Void = {}
    /// Touched only on the loop's thread.
    private var problems: [String] = []
    private var registrations: [Int32: (token: Token, interest: Interest)] = [:]
    private var readiness: [Int32: Readiness] = [:]
    /// Called before a wait lets the clock run to its timeout (a sleep that ends by itself).
    var onSleep: (Duration) -> Void = { _ in }
    private var waitsThisStep = 0
    private var endlessWaitsThisStep = 0
    private static let waitsPerStepLimit = 100_000
    private static let endlessWaitsPerStepLimit = 1_000

    init(clock: VirtualClock) { self.clock = clock }

    var waker: any BackendWaker { scriptedWaker }
    var embedding: EmbeddingSupport { .unsupported(reason: "a scripted backend has no descriptor") }
    var ownSources: OwnSourceServing { .none }

    func register(_ descriptor: Int32, token: Token, interest: Interest) throws(SystemError) {
        guard registrations[descriptor] == nil else {
            problems.append("backend: register(\(descriptor)) of a descriptor registered already")
            throw SystemError("register", errno: EEXIST)
        }
        guard !interest.isEmpty, interest.isSubset(of: [.readable, .writable]) else {
            problems.append("backend: register(\(descriptor)) with interest \(interest)")
            throw SystemError("register", errno: EINVAL)
        }
        registrations[descriptor] = (token, interest)
    }

    func unregister(_ descriptor: Int32, token: Token) throws(SystemError) {
        registrations[descriptor] = nil
    }

    /// From now on, `descriptor` is ready for `readiness` (empty: not ready). On the loop's
    /// thread (the program's steps and callouts run there).
    func setReadiness(_ readiness: Readiness, of descriptor: Int32) {
        self.readiness[descriptor] = readiness
    }

    /// How many descriptors are registered (the harness checks that none is left once every
    /// source is invalidated).
    var registeredCount: Int { registrations.count }

    func wait(timeout: Duration?, into events: inout [ReadyEvent]) throws(SystemError) {
        events.removeAll()
        for (descriptor, registration) in registrations.sorted(by: { $0.key < $1.key }) {
            let asked = Readiness(rawValue: registration.interest.rawValue).union([.hangup, .error])
            let reported = readiness[descriptor, default: []].intersection(asked)
            if !reported.isEmpty { events.append(ReadyEvent(token: registration.token, readiness: reported)) }
        }
        // A wake is consumed whatever else the wait reports.
        let woken = scriptedWaker.consume()
        if woken || !events.isEmpty { return }
        waitsThisStep += 1
        if waitsThisStep == Self.waitsPerStepLimit {
            problems.append("backend: more than \(Self.waitsPerStepLimit) waits in one step (a run that never ends)")
        }
        guard waitsThisStep < Self.waitsPerStepLimit else {
            clock.advance(by: .seconds(3600))
            return
        }
        guard let timeout else {
            endlessWaitsThisStep += 1
            if endlessWaitsThisStep == Self.endlessWaitsPerStepLimit {
                problems.append(
                    "backend: the loop keeps waiting without a timeout at \(clock.formattedNow), though stopped")
            }
            onEndlessWait()
            _ = scriptedWaker.consume()
            return
        }
        if timeout > .zero {
            onSleep(timeout)
            clock.advance(by: timeout)
        }
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

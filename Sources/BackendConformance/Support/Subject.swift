import Glibc
import RunLoopCore

/// A backend under test, made by the check's factory, with the calls a check makes on it: each
/// turns an unexpected error into a ``Mismatch`` that says which call failed.
///
/// Used on the check's own thread (and, in turn, on a helper thread: never by two at once).
final class Subject: @unchecked Sendable {
    // @unchecked: a check hands the subject from one thread to another only through a gate or
    // a join, which order the accesses.
    let backend: any Backend
    /// The buffer waits fill: ``events`` after each wait.
    private(set) var events: [ReadyEvent] = []
    let deadline: Duration

    init(_ context: BackendConformance.Context) throws {
        do {
            backend = try context.factory.make()
        } catch {
            throw Mismatch(
                expected: "the factory to make a \(context.factory.kind) backend", observed: "it threw \(error)")
        }
        try expect(
            backend.kind == context.factory.kind, "the backend's kind to be the factory's, \(context.factory.kind)",
            observed: "kind \(backend.kind)")
        deadline = context.deadline
    }

    /// Tokens of the last wait's events, in the order reported.
    var tokens: [UInt64] { events.map(\.token.rawValue) }

    func register(_ descriptor: Int32, _ token: UInt64, _ interest: Interest) throws {
        do {
            try backend.register(descriptor, token: Token(rawValue: token), interest: interest)
        } catch {
            throw Mismatch(
                expected: "register(\(descriptor), token: #\(token), interest: \(interest)) to succeed",
                observed: "it threw \(error)")
        }
    }

    func unregister(_ descriptor: Int32, _ token: UInt64, note: String = "") throws {
        do {
            try backend.unregister(descriptor, token: Token(rawValue: token))
        } catch {
            throw Mismatch(
                expected: "unregister(\(descriptor), token: #\(token))\(note) to succeed",
                observed: "it threw \(error)")
        }
    }

    /// One call of `wait`, with every signal blocked on this thread; returns whether the
    /// waker ended it.
    ///
    /// A backend's wait says nothing about its waker, so the kit tells a wake by its effect: with
    /// no signal able to interrupt it, a wait that returns with no event before its timeout was
    /// ended by the waker (a backend that returns early for nothing fails the never-early
    /// check). A poll cannot tell: it returns `false`.
    @discardableResult
    func waitOnce(_ timeout: Duration?) throws -> Bool {
        var all = sigset_t()
        var previous = sigset_t()
        sigfillset(&all)
        pthread_sigmask(SIG_BLOCK, &all, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        let start = ContinuousClock.now
        do {
            try backend.wait(timeout: timeout, into: &events)
        } catch {
            throw Mismatch(
                expected: "wait(timeout: \(timeout.map { "\($0)" } ?? "nil")) to succeed", observed: "it threw \(error)"
            )
        }
        guard events.isEmpty else { return false }
        guard let timeout else { return true }
        return timeout > .zero && ContinuousClock.now - start < timeout
    }

    /// A wait as Core makes it, for `timeout`; returns whether the waker ended it.
    @discardableResult
    func waitOut(_ timeout: Duration?) throws -> Bool {
        try waitOnce(timeout)
    }

    /// Waits (up to the deadline) for the events a ready descriptor must produce; fails when
    /// none came.
    func waitForEvents(_ what: @autoclosure () -> String) throws {
        let woken = try waitOut(deadline)
        try expect(
            !events.isEmpty, what(),
            observed: woken ? "the wait returned woken, with no event" : "no event within \(deadline)")
    }
}

extension [ReadyEvent] {
    /// The events as text, for failure messages: `[#7 [readable]]`.
    var listed: String { "[" + map { "\($0.token) \($0.readiness)" }.joined(separator: ", ") + "]" }
}

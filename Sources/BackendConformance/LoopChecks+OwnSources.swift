import RunLoopCore
import Synchronization

/// What a backend that serves sources of its own as a pass phase (`OwnSourceServing.passPhase`,
/// as the GLib backend serves its `GMainContext`'s) lets the conformance kit do, so that the kit's check of
/// rule G1 can make one of those sources: the kit cannot make another library's source itself.
///
/// Adopt it where you run the kit (a test target may add the conformance to your backend). A
/// backend that serves its own sources but does not adopt it fails the check, saying so.
public protocol OwnSourcesForConformance: Backend {
    /// Adds one of the backend's own sources, ready at once: the loop's next wait finds it
    /// ready, and its callback calls `callback` once, after which the source is gone. Called on
    /// the loop's thread, with the backend lock held.
    func addReadyOwnSource(_ callback: @escaping () -> Void)
}

extension BackendConformance {
    /// Rule G1, on a loop made with the factory: applies to a backend that serves sources of
    /// its own, and says why not to one that does not (see ``Check/skipReason(for:)``).
    static var ownSourceChecks: [Check] {
        [
            Check(
                "a backend's own sources run as a phase of the pass: after the ready descriptors, on the loop's thread, outside the loop's locks, counted as a handled source, keeping no mode alive",
                loopOwnSources, appliesTo: servesOwnSources)
        ]
    }

    /// `nil` when the backend serves sources of its own and lets the kit make one; otherwise
    /// why the check does not apply.
    private static func servesOwnSources(_ backend: any Backend) throws -> String? {
        guard case .passPhase = backend.ownSources else {
            return
                "the \(backend.kind) backend serves no sources of its own as a pass phase (its own sources: \(backend.ownSources.name)): rule G1 is about a backend that does"
        }
        try expect(
            backend is any OwnSourcesForConformance,
            "a backend that serves sources of its own to adopt OwnSourcesForConformance, so that the kit can make one",
            observed: "\(type(of: backend)) does not")
        return nil
    }

    private static func loopOwnSources(_ context: Context) throws {
        let loop = try makeLoop(context)
        let trace = Lock<[String]>([])
        let addOwnSource: (@escaping () -> Void) throws -> Void = { callback in
            let added = loop.withBackend { backend in
                guard let backend = backend as? any OwnSourcesForConformance else { return false }
                backend.addReadyOwnSource(callback)
                return true
            }
            try expect(added, "the loop's backend to adopt OwnSourcesForConformance", observed: "it does not")
        }
        // [R7] A descriptor source and one of the backend's own sources, both ready when the
        // loop first waits: the descriptor's handler runs first. The own source's callback runs
        // on the loop's thread, holding none of the loop's locks: a run of this same loop nested
        // in it returns (an empty mode: finished) instead of waiting for itself.
        let pipe = try KitPipe()
        defer { pipe.close() }
        let descriptor = try Loop.Source(fileDescriptor: pipe.readEnd) { _ in
            _ = pipe.drain()
            trace.withLock { $0.append("descriptor") }
        }
        loop.add(descriptor, to: .default)
        defer { descriptor.invalidate() }
        pipe.fill()
        try addOwnSource {
            let onLoopThread = Loop.currentIfCreated === loop
            trace.withLock { $0.append("own source, on the loop's thread: \(onLoopThread)") }
            let nested = loop.run("own source's nested run", timeout: .zero)
            trace.withLock { $0.append("nested run: \(nested)") }
            loop.stop()
        }
        let first = loop.run(.default, timeout: context.deadline)
        let expected = ["descriptor", "own source, on the loop's thread: true", "nested run: finished"]
        let seen = trace.withLock { $0 }
        try expect(
            first == .stopped && seen == expected,
            "the run to be stopped by the own source's callback, after \(expected)", observed: "\(first), after \(seen)"
        )
        // [R9] A pass that ran one of the backend's own sources handled a source: a run that
        // returns after one returns once it ran (the descriptor source, not ready, keeps the
        // mode alive meanwhile).
        trace.withLock { $0 = [] }
        try addOwnSource { trace.withLock { $0.append("own source") } }
        let second = loop.run(.default, timeout: context.deadline, returnAfterSourceHandled: true)
        let handled = trace.withLock { $0 }
        try expect(
            second == .handledSource && handled == ["own source"],
            "a run returning after a handled source to return handledSource once the own source ran",
            observed: "\(second), after \(handled)")
        // [R1] The backend's own sources keep no mode alive: a run of a mode with nothing of the
        // loop's in it finishes at once, one of them ready or not.
        try addOwnSource {}
        let third = loop.run("a mode with nothing in it", timeout: context.deadline)
        try expect(
            third == .finished, "a run of an empty mode to finish though one of the backend's own sources is ready",
            observed: "\(third)")
    }
}

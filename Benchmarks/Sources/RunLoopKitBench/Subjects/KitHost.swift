import Foundation
import Glibc
import RunLoopKit
import Synchronization

/// A RunLoopKit loop on its own pthread, created with `Loop.current(backend:)` and run in
/// `.default` until `stop()` — or, for an embedding, attached to a `GMainLoop` that runs the
/// thread until `stop()`.
///
/// A version-0 "quit" source keeps the mode alive (an empty mode would make `run` return at
/// once) and, when signalled, stops the run from inside it — `Loop.stop()` from outside has no
/// effect while the loop is between runs, a signal is never lost.
///
/// A main subject's loop is `Loop.main`, which the main thread of a `main-subject` child
/// process runs already (`MainSubject`): starting it runs `setup` on the main thread; stopping
/// it waits until the main loop has run what was posted before, and leaves it running.
final class KitHost: Sendable {
    let loop: Loop
    /// Ends the loop's run; `nil` for the main loop, which runs on.
    private let quit: Loop.Source?
    /// The loop's own thread; `nil` for the main loop.
    private let thread: Mutex<PThread?>

    /// Starts the loop; `setup` runs on the loop's thread before the first run.
    static func start(
        _ backend: BackendKind, setup: @escaping @Sendable (Loop) throws -> Void = { _ in }
    ) throws -> KitHost {
        try start(.kit(backend), setup: setup)
    }

    /// Starts the loop of a RunLoopKit subject (`Subject.isKitLoop`): a backend's loop running
    /// itself, or an embedding's loop attached to a `GMainLoop` that runs on the thread
    /// instead. `setup` runs on the loop's thread before the first run.
    static func start(
        _ subject: Subject, setup: @escaping @Sendable (Loop) throws -> Void = { _ in }
    ) throws -> KitHost {
        if case let .main(kind) = subject { return try startMain(kind, setup: setup) }
        let (backend, embedding): (BackendKind, Embedding?) =
            switch subject {
            case let .kit(kind): (kind, nil)
            case .main: preconditionFailure("KitHost: started above")
            case let .embedded(embedding): (embedding.backend, embedding)
            case .coreFoundation, .nio, .glib, .floor:
                preconditionFailure("KitHost: \(subject) is not a RunLoopKit loop")
            }
        let handoff = Handoff<Result<KitHost, any Error>>()
        let started = Handoff<PThread>()
        let thread = PThread {
            // Embedded: GLib's loop runs the thread, made before the RunLoopKit loop so that
            // the thread's default context is GLib's own when the loop attaches to it.
            let glib = embedding.map { _ in GLibMainLoop.make() }
            defer { glib?.tearDown() }
            let loop: Loop
            do {
                loop = try Loop.current(backend: backend)
            } catch {
                handoff.put(.failure(error))
                return
            }
            let finished = Atomic<Bool>(false)
            let quit = Loop.Source {
                finished.store(true, ordering: .relaxed)
                if let glib { glib.quit() } else { loop.stop() }
            }
            loop.add(quit, to: .default)
            let detach: (@Sendable () -> Void)?
            do {
                try setup(loop)
                detach = try embedding.map { try $0.attach(loop, glib!.context) }
            } catch {
                handoff.put(.failure(error))
                return
            }
            handoff.put(.success(KitHost(loop: loop, quit: quit, thread: started.take())))
            if let glib {
                // The quit source quits GLib's loop from inside it: the run cannot miss it.
                glib.run()
                detach?()
            } else {
                while !finished.load(ordering: .relaxed) { loop.run(.default) }
            }
        }
        started.put(thread)
        switch handoff.take() {
        case let .success(host): return host
        case let .failure(error):
            thread.join()
            throw error
        }
    }

    /// The main loop of a `main-subject` child: `setup` runs on the main thread, which runs
    /// the loop already (kept from an empty mode by `MainSubject`'s own source, so this host
    /// adds none: the main loop holds what a loop thread holds). A main loop that does not run
    /// the setup within `mainDeadline` (left blocked by a lost wake, say) fails the start
    /// instead of hanging the child.
    private static func startMain(
        _ kind: BackendKind, setup: @escaping @Sendable (Loop) throws -> Void
    ) throws -> KitHost {
        guard let loop = MainSubject.loop, loop.backend == kind else {
            preconditionFailure("KitHost: the main loop on \(kind) is measured in a main-subject child process")
        }
        let handoff = Handoff<Result<Void, any Error>>()
        loop.perform { handoff.put(Result { try setup(loop) }) }
        guard let outcome = handoff.take(within: mainDeadline) else {
            throw ChildProcess.Failure(description: "the main loop did not run the setup within \(mainDeadline) s")
        }
        try outcome.get()
        return KitHost(loop: loop, quit: nil, thread: nil)
    }

    /// How long a main-loop host waits for the main loop to run its setup or its end.
    static let mainDeadline = 10.0

    private init(loop: Loop, quit: Loop.Source?, thread: PThread?) {
        self.loop = loop
        self.quit = quit
        self.thread = Mutex(thread)
    }

    /// Runs `body` on the loop's thread and returns its value (the loop wakes for it).
    func onLoop<Value: Sendable>(_ body: @escaping @Sendable () -> Value) -> Value {
        let handoff = Handoff<Value>()
        loop.perform { handoff.put(body()) }
        return handoff.take()
    }

    /// Ends the run and joins the loop's thread (whose exit tears the loop down, so that the
    /// caller may close descriptors its sources watched).
    func stop() {
        guard let quit else {
            // The main loop runs on. Everything posted before this has run once this block
            // runs (blocks run in order), so what the caller reads next is final, as a joined
            // thread's would be.
            let drained = Handoff<Void>()
            loop.perform { drained.put(()) }
            if drained.take(within: Self.mainDeadline) == nil {
                FileHandle.standardError.write(
                    Data("runloopkit-bench: the main loop did not drain within \(Self.mainDeadline) s\n".utf8))
            }
            return
        }
        quit.signal()
        thread.withLock { $0.take() }?.join()
    }
}

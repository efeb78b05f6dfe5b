import Glibc
import RunLoopKit
import Synchronization

/// A RunLoopKit loop on its own pthread, created with `Loop.current(backend:)` and run in
/// `.default` until `stop()`.
///
/// A version-0 "quit" source keeps the mode alive (an empty mode would make `run` return at
/// once) and, when signalled, stops the run from inside it — `Loop.stop()` from outside has no
/// effect while the loop is between runs, a signal is never lost.
final class KitHost: Sendable {
    let loop: Loop
    private let quit: Loop.Source
    private let thread: Mutex<PThread?>

    /// Starts the loop; `setup` runs on the loop's thread before the first run.
    static func start(
        _ backend: BackendKind, setup: @escaping @Sendable (Loop) throws -> Void = { _ in }
    ) throws -> KitHost {
        let handoff = Handoff<Result<KitHost, any Error>>()
        let started = Handoff<PThread>()
        let thread = PThread {
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
                loop.stop()
            }
            loop.add(quit, to: .default)
            do {
                try setup(loop)
            } catch {
                handoff.put(.failure(error))
                return
            }
            handoff.put(.success(KitHost(loop: loop, quit: quit, thread: started.take())))
            while !finished.load(ordering: .relaxed) { loop.run(.default) }
        }
        started.put(thread)
        switch handoff.take() {
        case let .success(host): return host
        case let .failure(error):
            thread.join()
            throw error
        }
    }

    private init(loop: Loop, quit: Loop.Source, thread: PThread) {
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
        quit.signal()
        thread.withLock { $0.take() }?.join()
    }
}

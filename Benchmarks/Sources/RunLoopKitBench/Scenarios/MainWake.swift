import CBenchSupport
import CoreFoundation
import Dispatch
import Foundation
import Glibc
import RunLoopKit

/// **wake/dispatch-main** — `DispatchQueue.main.async` onto a main loop.
///
/// A main loop must run on the process's main thread, and a process has one main loop (of one
/// backend kind), so each subject runs in a child process: the harness runs itself again as
/// `runloopkit-bench main-wake --subject S …`. In the child the main thread runs the main loop
/// and a pthread drives it with the spinning driver and the wake scenario's gaps (drawn again
/// from the same seed); the child prints its samples, one a line, and the parent folds them in.
///
/// - RunLoopKit: `Loop.current(backend:)` on the main thread makes `Loop.main`, run in
///   `.default` (a common mode, so it drains the main queue).
/// - CF: Foundation's `RunLoop.main` (`CFRunLoopGetMain`), run with `CFRunLoopRunInMode` in the
///   default mode, which serves the main queue on Linux as on Darwin.
/// - floor: the main thread waits in `epoll_pwait2` on libdispatch's main-queue eventfd and
///   drains the queue with `_dispatch_main_queue_callback_4CF` — the bridge both loops use.
enum MainWake {
    /// Runs the child for `subject` and reads its samples.
    static func runChild(_ subject: Subject, settings: Settings) throws -> WakeDriver.Run {
        let lines = try ChildProcess.run([
            MainWakeChild.configuration.commandName!, "--subject", subject.description, "--samples",
            "\(settings.wakeSamples)", "--warmup", "\(settings.wakeWarmup)", "--seed", "\(settings.seed)",
        ])
        var run = WakeDriver.Run()
        for line in lines {
            if let sample = UInt64(line) {
                run.samples.append(sample)
            } else if line.hasPrefix("awake "), let count = Int(line.dropFirst(6)) {
                run.awakeAtPost = count
            } else if line == "lost" {
                run.lost = true
            }
        }
        return run
    }

    // MARK: the child

    /// The child's body, on the main thread. Prints the samples, `awake N`, and `lost` or
    /// `error …` when it could not measure.
    static func child(_ subject: Subject, samples: Int, warmup: Int, seed: UInt64) {
        let gaps = WakeScenario.gaps(warmup + samples, seed: seed)
        let probe = Probe(blocking: false)
        let finished = Signal()
        let outcome = Owned(WakeDriver.Run())
        // The driver: posts to the main queue, then (its last post) ends the main loop's run.
        func startDriver(stop: @escaping @Sendable () -> Void) -> PThread {
            PThread {
                outcome.value = WakeDriver.spinning(probe, gaps: gaps, warmup: warmup) { _ in
                    DispatchQueue.main.async { probe.mark() }
                }
                if outcome.value.lost { emit(outcome.value); exit(0) }
                DispatchQueue.main.async {
                    finished.raise()
                    stop()
                }
            }
        }
        switch subject {
        case let .kit(kind):
            let loop: Loop
            do {
                loop = try Loop.current(backend: kind)
            } catch {
                print("error \(error)")
                return
            }
            guard loop === Loop.main else {
                print("error the main thread's loop is not Loop.main")
                return
            }
            let driver = startDriver { loop.stop() }
            while !finished.isRaised { loop.run(.default) }
            driver.join()
        case .coreFoundation:
            let main = CFLoop(ref: CFRunLoopGetMain())
            // RunLoop.main is this loop; a never-signalled source keeps its mode from being empty.
            let keepAlive = CFSignalSource {}
            keepAlive.add(to: main)
            let driver = startDriver { CFRunLoopStop(main.ref) }
            while !finished.isRaised { _ = CFRunLoopRunInMode(CFLoop.mode, 1e6, false) }
            driver.join()
            keepAlive.invalidate()
        case .floor:
            let port = _dispatch_get_main_queue_handle_4CF()
            guard port >= 0 else {
                print("error libdispatch has no main-queue handle")
                return
            }
            let poller = FloorPoller()
            poller.add(port, token: 0)
            let driver = startDriver {}
            while !finished.isRaised {
                poller.wait { _ in
                    FD.drain(port)
                    _dispatch_main_queue_callback_4CF(nil)
                }
            }
            driver.join()
        case .nio:
            print("error a NIO event loop does not serve DispatchQueue.main")
            return
        case .glib:
            print("error a GMainLoop alone does not serve DispatchQueue.main")
            return
        case .embedded:
            print("error the main-queue child runs a loop that runs itself")
            return
        case .main:
            print("error the backend's own subject measures its main loop here")
            return
        }
        emit(outcome.value)
    }

    private static func emit(_ run: WakeDriver.Run) {
        var text = run.samples.map { "\($0)\n" }.joined()
        text += "awake \(run.awakeAtPost)\n"
        if run.lost { text += "lost\n" }
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

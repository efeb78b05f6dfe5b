// A LoopThreadService under a ServiceGroup that shuts down gracefully on SIGTERM: the
// ServiceLifecycle tests run it, wait for "serving", send SIGTERM and read the rest.
//
// Usage: ServiceLifecycleFixture BACKEND. Prints (standard output, unbuffered):
//   serving                       once the loop has run a block posted once the group runs
//   posted N ran N late-refused   after the group's run returned: N blocks were accepted while
//                                 the group ran and all of them ran; a block posted then is refused
// Exit status 0 when the group ended without error, 1 otherwise, 2 on bad usage.
import Glibc
import Logging
import RunLoopKit
import RunLoopKitServiceLifecycle
import ServiceLifecycle
import Synchronization

/// Writes a line to standard output at once (the parent reads it while this program runs).
func say(_ text: String) {
    let line = text + "\n"
    _ = line.utf8CString.withUnsafeBufferPointer { write(1, $0.baseAddress, $0.count - 1) }
}

/// Runs the service under its group until SIGTERM; returns the exit status.
func serveUntilTerminated() async -> Int32 {
    guard CommandLine.arguments.count == 2, let backend = BackendKind(rawValue: CommandLine.arguments[1]) else {
        say("usage: ServiceLifecycleFixture BACKEND")
        return 2
    }
    let service: LoopThreadService
    do {
        service = try LoopThreadService(name: "fixture", backend: backend)
    } catch {
        say("no loop thread: \(error)")
        return 1
    }
    let logger = Logger(label: "fixture", factory: { StreamLogHandler.standardError(label: $0) })
    let counts = Counts()
    // The announcer runs once the group has installed its signal handlers (it does so before it
    // starts any service): a SIGTERM sent earlier would end the program the default way.
    let announcer = Announcer(thread: service.thread, counts: counts)
    let group = ServiceGroup(
        configuration: ServiceGroupConfiguration(
            services: [service, announcer], gracefulShutdownSignals: [.sigterm], logger: logger))

    // A thread that keeps posting until refused: the blocks accepted before the shutdown must
    // all run before the loop ends.
    let poster: PThread
    do {
        poster = try PThread.spawn(name: "poster") {
            while service.thread.perform({ counts.ran.add(1, ordering: .relaxed) }) {
                counts.accepted.add(1, ordering: .relaxed)
                usleep(500)
            }
        }
    } catch {
        say("no poster thread: \(error)")
        return 1
    }

    do {
        try await group.run()
    } catch {
        say("the group threw \(error)")
        return 1
    }
    poster.join()
    let lateRefused = !service.thread.perform { say("late block ran") }
    say(
        "posted \(counts.accepted.load(ordering: .relaxed)) ran \(counts.ran.load(ordering: .relaxed))"
            + (lateRefused ? " late-refused" : " late-accepted"))
    return 0
}

/// Says "serving" from the loop once the group runs its services, then waits for the shutdown.
/// Its block is counted like the poster's, so that at least one block is accepted.
struct Announcer: Service {
    let thread: LoopThread
    let counts: Counts

    func run() async throws {
        let counts = self.counts
        if thread.perform({
            say("serving")
            counts.ran.add(1, ordering: .relaxed)
        }) {
            counts.accepted.add(1, ordering: .relaxed)
        }
        // Returns at graceful shutdown (the group shuts this service down first: it is listed
        // after the loop's), or throws at cancellation.
        try await gracefulShutdown()
    }
}

/// What was counted: blocks accepted, blocks run.
final class Counts: Sendable {
    let accepted = Atomic<Int>(0)
    let ran = Atomic<Int>(0)
}

exit(await serveUntilTerminated())

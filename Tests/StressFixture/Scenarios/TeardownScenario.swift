import Glibc
import RunLoopKit
import Synchronization
import TestSupport

/// The many-threads teardown scenario (see the Teardown tests in ConformanceTests).
enum TeardownScenario {
    /// How many threads run at once: a few, as a program's worker threads come and go.
    static let concurrent = 4

    static func manyThreads(_ backend: BackendKind, count: Int) throws {
        let watchdog = try Watchdog("the teardown scenario on \(backend)")
        defer { watchdog.stop() }
        // The first hundred threads warm up what the process keeps for good (malloc arenas,
        // glibc's stack cache, a library's own descriptors); the baseline is taken after them.
        let warmUp = min(100, count / 10)
        try runThreads(backend, count: warmUp, watchdog: watchdog)
        let (descriptors, memory) = (DescriptorSnapshot.take(), residentMemoryBytes())
        let survivors = try runThreads(backend, count: count - warmUp, watchdog: watchdog)
        let (descriptorsAfter, memoryAfter) = (DescriptorSnapshot.take(), residentMemoryBytes())
        check(
            descriptorsAfter.count == descriptors.count,
            "descriptors: \(descriptors.count) → \(descriptorsAfter.count), new: \(descriptorsAfter.added(since: descriptors).prefix(20))"
        )
        check(survivors == 0, "\(survivors) loops (or their timers or sources) outlived their threads")
        // The exact leak detectors are `survivors` (Swift objects) and the descriptor count.
        // Resident memory is the backstop for what has neither — C allocations such as an
        // event_base, or an io_uring ring's mapped queues (some 80 KB each: 10,000 leaked rings
        // are most of a gigabyte). Why 50 MB: what legitimately grows (malloc's per-thread
        // arenas and their fragmentation, glibc's cache of a few thread stacks) stays within a
        // few megabytes — about 150 KB in a debug build — while a leak of 5 KB per thread,
        // about what one epoll loop holds, crosses it. Not checked under the Thread Sanitizer,
        // which keeps tens of KB of its own for every thread that ever ran.
        let growth = memoryAfter - memory
        check(
            growth < 50 << 20 || isThreadSanitized,
            "resident memory grew by \(growth >> 10) KB over \(count - warmUp) threads")
        report(
            "teardown on \(backend): \(count) threads; descriptors \(descriptors.count) → \(descriptorsAfter.count); resident memory \(memory >> 10) KB → \(memoryAfter >> 10) KB"
        )
    }

    /// Runs `count` threads, `concurrent` at a time; returns how many of their loops, timers
    /// and sources are still alive once every thread has been joined.
    @discardableResult
    private static func runThreads(_ backend: BackendKind, count: Int, watchdog: Watchdog) throws -> Int {
        var started = 0
        var survivors = 0
        while started < count {
            let batch = min(concurrent, count - started)
            let weak = (0..<batch).map { _ in WeakTrio() }
            let threads = try weak.map { weak in try TestThread { useLoop(backend, recordingIn: weak) } }
            for thread in threads { check(thread.join(), "a thread did not finish") }
            survivors += weak.reduce(0) { $0 + $1.closePipeAndCountAlive() }
            started += batch
            watchdog.beat()
        }
        return survivors
    }

    /// The body of one thread: a loop with a timer and a descriptor source on its own pipe,
    /// run until both were served; the thread then exits with the source still in the loop and
    /// a second timer still pending, leaving it all to the teardown. The pipe is closed after
    /// the thread was joined, when no loop watches it any more.
    private static func useLoop(_ backend: BackendKind, recordingIn weak: WeakTrio) {
        do {
            let loop = try Loop.current(backend: backend)
            let pipe = try Pipe()
            weak.pipe = pipe
            let fired = Atomic<Bool>(false)
            let timer = try Loop.Timer(after: .microseconds(10)) { _ in fired.store(true, ordering: .relaxed) }
            let pending = try Loop.Timer(after: .seconds(3600)) { _ in }
            let source = try Loop.Source(fileDescriptor: pipe.readEnd) { _ in }
            loop.add(timer, to: .default)
            loop.add(pending, to: .default)
            loop.add(source, to: .default)
            pipe.fill()
            let deadline = ContinuousClock.now + generousDeadline
            var handled = false
            while !(handled && fired.load(ordering: .relaxed)), ContinuousClock.now < deadline {
                handled =
                    loop.run(timeout: generousDeadline, returnAfterSourceHandled: true) == .handledSource || handled
            }
            check(handled && fired.load(ordering: .relaxed), "the loop did not serve its timer and source")
            weak.record(loop: loop, timer: pending, source: source)
        } catch {
            fail("a thread's loop failed: \(error)")
        }
    }
}

/// Weak references to one thread's loop, pending timer and source, and the thread's pipe
/// (closed once the thread has been joined).
final class WeakTrio: @unchecked Sendable {
    // @unchecked: written by the thread, read after it was joined.
    private weak var loop: Loop?
    private weak var timer: Loop.Timer?
    private weak var source: Loop.Source?
    var pipe: Pipe?

    func record(loop: Loop, timer: Loop.Timer, source: Loop.Source) {
        (self.loop, self.timer, self.source) = (loop, timer, source)
    }

    /// Closes the pipe; returns how many of the three are still alive.
    func closePipeAndCountAlive() -> Int {
        pipe?.close()
        pipe = nil
        return [loop as AnyObject?, timer, source].compactMap { $0 }.count
    }
}

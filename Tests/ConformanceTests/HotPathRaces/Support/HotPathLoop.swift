import RunLoopKit
import TestSupport

/// A loop on a thread of its own, running until the test ends it, for posters on other threads.
struct HotPathLoop: Sendable {
    /// What the loop's thread saw once its run ended and its items were invalidated.
    struct Report: Sendable {
        var statistics = Loop.Statistics()
        var registeredDescriptors = -1
        /// What the kernel still held for the loop's sources (``KernelRegistrations``), or why
        /// it could not be read.
        var inKernel = ["never read"]
    }

    let loop: Loop
    /// Where the kernel keeps the loop's registrations.
    let kernel: KernelRegistrations
    private let thread: TestThread
    private let report: Ref<Report>

    /// Starts the thread: `prepare` sets the loop up on it and returns what to invalidate once
    /// `run` (by default: `run()` until stopped) returns. Returns once the run has begun: a
    /// block posted for `readyIn` has run (a `wakeUp()` before a run has no effect).
    init(
        _ backend: BackendKind,
        readyIn modes: Set<Loop.Mode> = [.default],
        prepare: @escaping @Sendable (Loop) throws -> @Sendable () -> Void,
        run body: @escaping @Sendable (Loop) -> Void = { $0.run() }
    ) throws {
        let ready = Latch()
        let loopRef = Ref<Loop>()
        let kernelRef = Ref<KernelRegistrations>()
        let failure = Ref<String>()
        let report = Ref<Report>()
        thread = try TestThread {
            defer { ready.open() }
            let loop: Loop
            let kernel: KernelRegistrations
            let cleanUp: @Sendable () -> Void
            do {
                loop = try Loop.current(backend: backend)
                kernel = try KernelRegistrations.find(for: loop)
                kernelRef.value = kernel
                cleanUp = try prepare(loop)
            } catch {
                failure.value = "\(error)"
                return
            }
            loopRef.value = loop
            loop.perform(in: modes) { ready.open() }
            body(loop)
            cleanUp()
            let inKernel: [String]
            do { inKernel = try kernel.registrations().map(\.description) } catch { inKernel = ["\(error)"] }
            report.value = Report(
                statistics: loop.statistics, registeredDescriptors: loop.registeredDescriptorCount, inKernel: inKernel)
        }
        self.report = report
        guard ready.wait(), let loop = loopRef.value, let kernel = kernelRef.value, failure.value == nil else {
            thread.join(within: generousDeadline)
            throw HotPathSetupFailed(why: failure.value ?? "the loop's thread did not start its run")
        }
        self.loop = loop
        self.kernel = kernel
    }

    /// Ends the run with `end` (by default `stop()`) and joins the loop's thread; `nil` if the
    /// thread did not finish in time (a lost wake, say), which is then left behind.
    func finish(_ end: (Loop) -> Void = { $0.stop() }) -> Report? {
        end(loop)
        guard thread.join(within: generousDeadline) else { return nil }
        return report.value
    }
}

private struct HotPathSetupFailed: Error {
    let why: String
}

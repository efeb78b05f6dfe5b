import CGLib
import Glibc
import RunLoopKit
import RunLoopKitGLib
import TestSupport
import Testing

/// The attached loop's timers keep the kernel's precision: GLib's poll is ended by a timerfd of
/// the source's, armed at the loop's deadline, not by GLib's whole-millisecond timeout (H3).
@Suite("RunLoopKitGLib: timer precision")
struct PrecisionTests {
    /// One GLib iteration's prepare and query, by hand: the context asks for no timeout of its
    /// own, and polls a timerfd armed for the loop's timer; then the timer fires, never early.
    @Test("the loop's deadline is a timerfd the context polls, not GLib's timeout", arguments: embeddableBackends)
    func deadlineIsATimerfd(_ backend: BackendKind) async throws {
        let (timeout, timerRemaining, lateness) = try await onGLibThread(backend) { loop, host in
            let attachment = try loop.attach(to: host.reference)
            defer { attachment.detach() }
            let far = try Loop.Timer(fireAt: ContinuousClock.now + .seconds(30), tolerance: .zero) { _ in }
            loop.add(far, to: .default)

            // The iteration's first half, as g_main_context_iteration makes it.
            #expect(g_main_context_acquire(host.context) != 0)
            var priority: gint = 0
            let ready = g_main_context_prepare(host.context, &priority) != 0
            var timeout: gint = 0
            var fds = [GPollFD](repeating: GPollFD(), count: 16)
            let count = Int(g_main_context_query(host.context, priority, &timeout, &fds, gint(fds.count)))
            #expect(!ready)
            // The deadline of every timerfd the context polls: the source's is 30 s away.
            let remaining = fds[0..<min(count, fds.count)].compactMap { timerRemainingSeconds($0.fd) }
            _ = g_main_context_check(host.context, priority, &fds, gint(min(count, fds.count)))
            g_main_context_release(host.context)
            far.invalidate()

            // A timer served through GLib's iteration fires at its instant or after it.
            let firedLateBy = Lock<Duration?>(nil)
            let requested = ContinuousClock.now + .milliseconds(5)
            loop.add(
                try Loop.Timer(fireAt: requested, tolerance: .zero) { _ in
                    firedLateBy.withLock { $0 = ContinuousClock.now - requested }
                }, to: .default)
            _ = host.iterations(until: { firedLateBy.withLock { $0 } != nil })
            return (timeout, remaining, firedLateBy.withLock { $0 })
        }
        // GLib's timeout would be the loop's deadline in milliseconds (30000) without it.
        #expect(timeout == -1)
        #expect(timerRemaining.count == 1)
        #expect(timerRemaining.allSatisfy { $0 > 29 && $0 <= 30 })
        let late = try #require(lateness)
        #expect(late >= .zero)
    }
}

/// How long until the timerfd `descriptor` expires, in seconds; nil when the descriptor is no
/// timerfd (or is disarmed).
private func timerRemainingSeconds(_ descriptor: Int32) -> Double? {
    var link = [CChar](repeating: 0, count: 64)
    let length = readlink("/proc/self/fd/\(descriptor)", &link, link.count - 1)
    guard length > 0,
        String(decoding: link[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) == "anon_inode:[timerfd]"
    else { return nil }
    var value = itimerspec()
    guard timerfd_gettime(descriptor, &value) == 0, value.it_value.tv_sec != 0 || value.it_value.tv_nsec != 0 else {
        return nil
    }
    return Double(value.it_value.tv_sec) + Double(value.it_value.tv_nsec) / 1e9
}

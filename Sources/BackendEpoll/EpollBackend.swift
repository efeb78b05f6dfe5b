#if Epoll
internal import CEpoll
import Glibc
import RunLoopCore
import Synchronization

/// The epoll backend: `epoll_pwait2` for nanosecond timeouts and an eventfd waker.
///
/// Level-triggered. On kernels without `epoll_pwait2` (before 5.11) it falls back to
/// `epoll_wait` with the timeout rounded up to the next millisecond, never down.
public final class EpollBackend: Backend {
    /// Always `BackendKind.epoll`.
    public let kind: BackendKind = .epoll
    /// The eventfd waker, registered in the epoll set: safe from any thread; a wake while one
    /// is pending writes nothing.
    public var waker: any BackendWaker { eventWaker }

    /// The epoll descriptor itself: it polls readable when a registered descriptor is ready or
    /// the waker's eventfd was written, which is when a wait would return.
    public var embedding: EmbeddingSupport { .descriptor(epollDescriptor) }

    /// None: Core's descriptors only.
    public var ownSources: OwnSourceServing { .none }

    private let epollDescriptor: Int32
    private let eventWaker: EventfdWaker
    /// The events a wait fills. Unchecked: handing its memory to the kernel is otherwise a
    /// dynamic exclusivity access lasting the whole wait, whose end right after the wake costs
    /// a thread-local lookup in cold memory before the first timer or block runs (seen in
    /// `perf record` of the timer benchmark). Only `wait` touches it, on one thread at a time.
    @exclusivity(unchecked) private var buffer: [epoll_event]
    private var hasPwait2 = true

    /// The token the waker's eventfd is registered with; Core never hands it out.
    private static let wakerToken: UInt64 = .max

    /// Creates an epoll instance and its waker.
    ///
    /// - Throws: `SystemError` from `epoll_create1`, `eventfd` or `epoll_ctl`.
    public init() throws(SystemError) {
        epollDescriptor = try retryingOnInterrupt("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
        do {
            eventWaker = try EventfdWaker()
        } catch {
            close(epollDescriptor)
            throw error
        }
        buffer = Array(repeating: epoll_event(), count: 256)
        var event = epoll_event()
        // Edge-triggered: a wake is reported once per write and never read (see
        // `EventfdWaker.consumeEdge()`): one system call fewer between a post and its work.
        event.events = EPOLLIN.rawValue | EPOLLET.rawValue
        event.data.u64 = Self.wakerToken
        _ = try retryingOnInterrupt("epoll_ctl") {
            epoll_ctl(epollDescriptor, EPOLL_CTL_ADD, eventWaker.descriptor, &event)
        }
    }

    deinit { close(epollDescriptor) }

    /// Adds `descriptor` to the epoll set, level-triggered (`EPOLLIN | EPOLLRDHUP` for readable,
    /// `EPOLLOUT` for writable).
    ///
    /// - Throws: `SystemError` from `epoll_ctl`: `EEXIST` when already registered, `EBADF` when
    ///   closed, `EPERM` for a regular file or directory.
    public func register(_ descriptor: Int32, token: Token, interest: Interest) throws(SystemError) {
        try control(EPOLL_CTL_ADD, descriptor, token: token, interest: interest)
    }

    /// Removes `descriptor` from the epoll set; a descriptor already closed (or not registered) is
    /// no error. No later wait reports it.
    ///
    /// - Throws: `SystemError` from `epoll_ctl` for any other failure.
    public func unregister(_ descriptor: Int32, token: Token) throws(SystemError) {
        do {
            try control(EPOLL_CTL_DEL, descriptor, token: token, interest: [])
        } catch
            where error.errno == .badFileDescriptor || error.errno == .noSuchFileOrDirectory
            || error.errno == .notPermitted
        {
            // Closed (and so already dropped from the set), or closed and its number reused:
            // by a descriptor the set does not hold (ENOENT), or by a file that cannot be polled,
            // a regular file (EPERM; another thread may open one between a close and this).
            // Nothing to do.
        }
    }

    /// Waits in `epoll_pwait2` with the timeout rounded up to the nanosecond (`epoll_wait`, rounded
    /// up to the millisecond, where the kernel or a sandbox lacks it) and reports the ready
    /// descriptors. A signal ends the wait early with nothing reported.
    ///
    /// - Throws: `SystemError` when the wait itself fails.
    public func wait(timeout: Duration?, into events: inout [ReadyEvent]) throws(SystemError) {
        events.removeAll(keepingCapacity: true)
        let count = buffer.withUnsafeMutableBufferPointer { buffer in
            waitOnce(buffer.baseAddress!, Int32(buffer.count), timeout: timeout)
        }
        guard count >= 0 else {
            let code = currentErrno()
            // Interrupted by a signal: return with nothing, so Core waits again for what is
            // left of the timeout (restarting with the whole of it would starve timers).
            if code == EINTR { return }
            throw SystemError(hasPwait2 ? "epoll_pwait2" : "epoll_wait", errno: code)
        }
        for index in 0..<Int(count) {
            let event = buffer[index]
            if event.data.u64 == Self.wakerToken {
                eventWaker.consumeEdge()
                continue
            }
            events.append(
                ReadyEvent(token: Token(rawValue: event.data.u64), readiness: Self.readiness(of: event.events)))
        }
        // A full buffer means more may be ready: grow so the next wait sees them all.
        if Int(count) == buffer.count { buffer.append(contentsOf: repeatElement(epoll_event(), count: buffer.count)) }
    }

    private func waitOnce(_ buffer: UnsafeMutablePointer<epoll_event>, _ capacity: Int32, timeout: Duration?) -> Int32 {
        if hasPwait2 {
            let result: Int32
            if var spec = timeout?.timespecRoundedUp {
                result = epoll_pwait2(epollDescriptor, buffer, capacity, &spec, nil)
            } else {
                result = epoll_pwait2(epollDescriptor, buffer, capacity, nil, nil)
            }
            // Kernels before 5.11 answer ENOSYS; sandboxes with older seccomp profiles answer
            // EPERM for system calls they do not know. Either way, epoll_wait does the job.
            if result >= 0 || ![ENOSYS, EPERM].contains(currentErrno()) { return result }
            hasPwait2 = false
        }
        return epoll_wait(epollDescriptor, buffer, capacity, timeout.map(\.millisecondsRoundedUp) ?? -1)
    }

    private func control(_ operation: Int32, _ descriptor: Int32, token: Token, interest: Interest) throws(SystemError)
    {
        var event = epoll_event()
        if interest.contains(.readable) { event.events |= EPOLLIN.rawValue | EPOLLRDHUP.rawValue }
        if interest.contains(.writable) { event.events |= EPOLLOUT.rawValue }
        event.data.u64 = token.rawValue
        _ = try retryingOnInterrupt("epoll_ctl") { epoll_ctl(epollDescriptor, operation, descriptor, &event) }
    }

    private static func readiness(of events: UInt32) -> Readiness {
        var readiness: Readiness = []
        if events & EPOLLIN.rawValue != 0 { readiness.insert(.readable) }
        if events & EPOLLOUT.rawValue != 0 { readiness.insert(.writable) }
        if events & (EPOLLHUP.rawValue | EPOLLRDHUP.rawValue) != 0 { readiness.insert(.hangup) }
        if events & EPOLLERR.rawValue != 0 { readiness.insert(.error) }
        return readiness
    }
}
#endif

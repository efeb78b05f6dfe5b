#if Libevent
internal import CLibevent
import Glibc
import RunLoopCore

/// The events one wait collects from libevent's callbacks, completed with hang-ups and errors.
///
/// libevent's epoll backend turns `EPOLLHUP` and `EPOLLERR` into `EV_READ | EV_WRITE`, masked
/// by the event's interest: a pipe whose writer closed reaches a readable interest as plain
/// `EV_READ`, indistinguishable from data. Only `EPOLLRDHUP` survives, as `EV_CLOSED`. So after
/// a wait that reported descriptors, one zero-timeout `poll` over exactly those descriptors
/// (no syscall when none are ready) recovers `Readiness/hangup` and `Readiness/error`, as
/// the epoll backend reports them.
final class ReadyCollector {
    /// The wait lends the caller's buffer here while libevent runs the callbacks.
    var events: [ReadyEvent] = []
    private let waker: EventfdWaker
    /// The descriptor of each event, at the same index.
    private var descriptors: [Int32] = []
    private var polls: [pollfd] = []

    init(waker: EventfdWaker) {
        self.waker = waker
    }

    /// Drains the waker's eventfd, which libevent found readable.
    func consumeWake() {
        waker.consume()
    }

    /// Records what a descriptor event's callback reported.
    func append(_ context: EventContext, what: Int16) {
        events.append(ReadyEvent(token: context.token, readiness: Self.readiness(of: what)))
        descriptors.append(context.descriptor)
    }

    /// Adds the hang-ups and errors libevent folded away to the collected events.
    func completeHangUpsAndErrors() {
        defer { descriptors.removeAll(keepingCapacity: true) }
        guard !descriptors.isEmpty else { return }
        polls.removeAll(keepingCapacity: true)
        // No events asked: poll always reports POLLHUP, POLLERR and POLLNVAL.
        for descriptor in descriptors { polls.append(pollfd(fd: descriptor, events: 0, revents: 0)) }
        let count = polls.withUnsafeMutableBufferPointer { polls in
            var result: Int32
            repeat {
                result = poll(polls.baseAddress, nfds_t(polls.count), 0)
            } while result < 0 && currentErrno() == EINTR
            return result
        }
        guard count > 0 else { return }
        for index in polls.indices where polls[index].revents != 0 {
            let revents = Int32(polls[index].revents)
            // POLLNVAL: closed since libevent saw it; Core drops the event as stale if it is.
            if revents & Int32(POLLHUP) != 0 { events[index].readiness.insert(.hangup) }
            if revents & Int32(POLLERR) != 0 { events[index].readiness.insert(.error) }
        }
    }

    /// What libevent reported, as `Readiness`: `EV_CLOSED` (EPOLLRDHUP) is a hang-up.
    private static func readiness(of what: Int16) -> Readiness {
        var readiness: Readiness = []
        if what & Int16(EV_READ) != 0 { readiness.insert(.readable) }
        if what & Int16(EV_WRITE) != 0 { readiness.insert(.writable) }
        if what & Int16(EV_CLOSED) != 0 { readiness.insert(.hangup) }
        return readiness
    }
}
#endif

#if GLib
import Glibc
import RunLoopCore

/// One of Core's descriptors, as the GLib backend polls it.
struct DescriptorRegistration {
    var descriptor: Int32
    var token: Token
    var interest: Interest
    /// The file the descriptor named when registered. `ppoll` watches numbers:
    /// before a readiness is reported, the number must still name this file, or a stranger
    /// that took it over (the user closed the descriptor without removing its source) would be
    /// reported under this registration's token.
    var file: FileIdentity
    /// Closed or taken over: reported once as an error, never polled again.
    var failed = false

    /// `POLLRDHUP` (Linux-specific, not in Glibc's Swift module).
    static let pollReadHangup: Int16 = 0x2000

    /// The `poll` events for the interest: `POLLIN | POLLRDHUP` for readable (a peer's
    /// half-close is a hang-up, as epoll's `EPOLLRDHUP` makes it), `POLLOUT` for writable.
    var pollEvents: Int16 {
        var events: Int16 = 0
        if interest.contains(.readable) { events |= Int16(POLLIN) | Self.pollReadHangup }
        if interest.contains(.writable) { events |= Int16(POLLOUT) }
        return events
    }

    /// What `revents` says, for this registration: readable and writable only as asked, hang-up
    /// and error always (`POLLNVAL`, a closed descriptor, is an error).
    func readiness(of revents: Int16) -> Readiness {
        var readiness: Readiness = []
        if revents & Int16(POLLIN) != 0, interest.contains(.readable) { readiness.insert(.readable) }
        if revents & Int16(POLLOUT) != 0, interest.contains(.writable) { readiness.insert(.writable) }
        if revents & (Int16(POLLHUP) | Self.pollReadHangup) != 0 { readiness.insert(.hangup) }
        if revents & (Int16(POLLERR) | Int16(POLLNVAL)) != 0 { readiness.insert(.error) }
        return readiness
    }

    /// Whether the descriptor still names the file it named when registered.
    var namesRegisteredFile: Bool { FileIdentity(of: descriptor) == file }
}
#endif

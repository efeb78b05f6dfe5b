import Glibc
import RunLoopKit

/// What the kernel itself says a loop watches, to check "nothing left registered" without
/// trusting Core's own bookkeeping (`registeredDescriptorCount`).
///
/// - epoll and libevent: the loop's epoll instance's entries in `/proc/self/fdinfo/<epfd>`, one
///   `tfd:` line per watched descriptor. The instance is found through the backend's waker: its
///   eventfd is watched by exactly one epoll instance in the process, the loop's (another
///   test's loop may have an epoll instance with an entry under the same number only for a
///   different file, which the inode tells apart). That makes the search safe while other tests
///   open and close epoll instances in the same process. The backend's own entries are
///   accounted for exactly: the waker's eventfd (epoll, with the waker's token `data` of all
///   ones); for libevent the waker's eventfd and the one timerfd of its precise timers.
/// - io_uring: the ring's pending poll requests, the `PollList:` of `/proc/self/fdinfo/<ring>`
///   (the waker posts completions with `MSG_RING` and has no poll). The ring's descriptor
///   comes from the backend. A poll request also holds a reference to its file, so the peer
///   of a socket whose poll was left behind never sees end of file: tests check that too.
/// - GLib: its backend hands the kernel its descriptors only for the length of one `ppoll`
///   (which holds a reference to each file until it returns; Core removes a descriptor only
///   between waits, waking the loop first), so there is no kernel set to read between waits.
///   What is read instead is the set the backend hands `ppoll` on every wait
///   (`GLibBackend.watchedDescriptors`, kept by its register and unregister). The tests that
///   close a removed socket and check its peer sees end of file check the kernel's side.
///
/// Found on the loop's thread (``find(for:)``); read from any thread (``registrations()``).
public struct KernelRegistrations: Sendable, CustomStringConvertible {
    private enum Place: Sendable {
        case epoll(instance: Int32, waker: Int32, wakerData: UInt64?, timerfd: Bool)
        case ring(Int32)
        /// The GLib backend's `ppoll` set.
        #if GLib
        case pollSet(WatchedDescriptors)
        #endif
    }

    private let place: Place

    /// Finds where `loop`'s registrations live in the kernel. Call on the loop's thread.
    ///
    /// - Throws: ``KernelReadFailure`` when the backend is not one of RunLoopKit's, or its epoll
    ///   instance is not found exactly once.
    public static func find(for loop: Loop) throws(KernelReadFailure) -> KernelRegistrations {
        let found: Result<Place, KernelReadFailure> = loop.withBackend { backend in
            switch backend.kind.rawValue {
            case "uring":
                #if URing
                if let uring = backend as? URingBackend { return .success(.ring(uring.ringDescriptor)) }
                #endif
                return .failure(KernelReadFailure("the io_uring loop's backend is not a URingBackend"))
            case "glib":
                #if GLib
                if let glib = backend as? GLibBackend { return .success(.pollSet(glib.watchedDescriptors)) }
                #endif
                return .failure(KernelReadFailure("the GLib loop's backend is not a GLibBackend"))
            default:
                guard let waker = backend.waker as? EventfdWaker else {
                    return .failure(KernelReadFailure("\(backend.kind)'s waker is not an eventfd"))
                }
                let isLibevent = backend.kind.rawValue == "libevent"
                return findEpollInstance(
                    watching: waker.descriptor, wakerData: isLibevent ? nil : UInt64.max, timerfd: isLibevent)
            }
        }
        return KernelRegistrations(place: try found.get())
    }

    /// The registrations the kernel holds for the loop's sources (the backend's own entries left
    /// out, after checking they are exactly there); empty when nothing is left.
    ///
    /// - Throws: ``KernelReadFailure`` when `/proc` cannot be read or the backend's own entries
    ///   are not what they must be.
    public func registrations() throws(KernelReadFailure) -> [KernelRegistration] {
        switch place {
        #if GLib
        case let .pollSet(watched):
            return watched.current.map { KernelRegistration(descriptor: $0, description: "ppoll entry for \($0)") }
        #endif
        case let .ring(ring):
            guard let polls = pollRequests(ofRing: ring) else {
                throw KernelReadFailure("cannot read the PollList of ring \(ring) in /proc/self/fdinfo")
            }
            return polls.map { KernelRegistration(descriptor: nil, description: $0) }
        case let .epoll(instance, waker, wakerData, timerfd):
            guard let watches = epollEntries(of: instance) else {
                throw KernelReadFailure("cannot read epoll instance \(instance) in /proc/self/fdinfo")
            }
            var rest = watches
            let wakers = rest.filter { $0.descriptor == waker && (wakerData == nil || $0.data == wakerData) }
            guard wakers.count == 1 else {
                throw KernelReadFailure(
                    "epoll instance \(instance) watches the waker's eventfd \(waker) \(wakers.count) times: \(watches)")
            }
            rest.removeAll { $0 == wakers[0] }
            if timerfd {
                let timers = rest.filter { descriptorLink($0.descriptor) == "anon_inode:[timerfd]" }
                guard timers.count == 1 else {
                    throw KernelReadFailure(
                        "libevent's epoll instance \(instance) watches \(timers.count) timerfds, not its one: \(watches)"
                    )
                }
                rest.removeAll { $0 == timers[0] }
            }
            return rest.map { KernelRegistration(descriptor: $0.descriptor, description: $0.description) }
        }
    }

    /// The epoll instance that watches the waker's eventfd `waker` (the same file: same number and
    /// inode, and the waker's token when known); exactly one must.
    private static func findEpollInstance(
        watching waker: Int32, wakerData: UInt64?, timerfd: Bool
    ) -> Result<Place, KernelReadFailure> {
        var information = stat()
        guard fstat(waker, &information) == 0 else { return .failure(KernelReadFailure("fstat of the waker failed")) }
        let inode = UInt64(information.st_ino)
        let instances = openDescriptorNumbers().filter { descriptorLink($0) == "anon_inode:[eventpoll]" }.filter {
            instance in
            epollEntries(of: instance)?.contains {
                $0.descriptor == waker && $0.inode == inode && (wakerData == nil || $0.data == wakerData)
            } ?? false
        }
        guard instances.count == 1 else {
            return .failure(
                KernelReadFailure("\(instances.count) epoll instances watch the waker's eventfd \(waker), not one"))
        }
        return .success(.epoll(instance: instances[0], waker: waker, wakerData: wakerData, timerfd: timerfd))
    }

    public var description: String {
        switch place {
        #if GLib
        case .pollSet: "the GLib backend's ppoll set"
        #endif
        case let .ring(ring): "io_uring ring \(ring)"
        case let .epoll(instance, waker, _, _): "epoll instance \(instance) (waker \(waker))"
        }
    }
}

/// One registration the kernel holds: the descriptor it watches where the kernel says (epoll),
/// `nil` where it does not (an io_uring poll request).
public struct KernelRegistration: Sendable, CustomStringConvertible {
    public let descriptor: Int32?
    public let description: String
}

/// Why the kernel's view could not be read: a failure of the test, never a pass.
public struct KernelReadFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A descriptor an epoll instance watches: a `tfd:` line of its `/proc/self/fdinfo` entry
/// (`tfd: 7 events: 19 data: ffffffffffffffff pos:0 ino:401 sdev:f`). The number is the one the
/// descriptor had when it was added; the instance drops the entry when the file is released.
public struct EpollWatch: Equatable, Sendable, CustomStringConvertible {
    public let descriptor: Int32
    public let data: UInt64
    public let inode: UInt64

    public var description: String {
        "descriptor \(descriptor) (\(descriptorLink(descriptor) ?? "closed"), data \(String(data, radix: 16)))"
    }
}

/// The `tfd:` entries of epoll instance `instance`, or nil if it cannot be read (closed).
public func epollEntries(of instance: Int32) -> [EpollWatch]? {
    guard let lines = fdinfoLines(instance) else { return nil }
    return lines.filter { $0.hasPrefix("tfd:") }.compactMap { line in
        let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        func value(after key: String) -> Substring? {
            guard let index = fields.firstIndex(of: Substring(key)), index + 1 < fields.count else { return nil }
            return fields[index + 1]
        }
        let inode = fields.first { $0.hasPrefix("ino:") }.flatMap { UInt64($0.dropFirst(4), radix: 16) }
        guard let descriptor = value(after: "tfd:").flatMap({ Int32($0) }),
            let data = value(after: "data:").flatMap({ UInt64($0, radix: 16) }), let inode
        else { return nil }
        return EpollWatch(descriptor: descriptor, data: data, inode: inode)
    }
}

/// One line per poll request pending on io_uring `ring` (its fdinfo's `PollList:` section), or
/// nil if it cannot be read.
///
/// The kernel prints the ring's details only when it gets the ring's lock without waiting
/// (`mutex_trylock`, to avoid a lock-order inversion with the seq file): while the loop's thread
/// holds it (submitting, reaping) the section is missing. Missing is "busy, read again", so the
/// read is retried, a millisecond apart, for up to the generous deadline; nil means it never
/// appeared (the stress suite saw it missing once in about 1,500 reads).
public func pollRequests(ofRing ring: Int32) -> [String]? {
    let clock = ContinuousClock()
    let deadline = clock.now + generousDeadline
    var read = fdinfoLines(ring)
    while read?.contains(where: { $0.hasPrefix("PollList:") }) == false, clock.now < deadline {
        usleep(1000)
        read = fdinfoLines(ring)
    }
    guard let lines = read, let start = lines.firstIndex(where: { $0.hasPrefix("PollList:") }) else {
        return nil
    }
    // The section's entries are indented; the next section starts at the margin.
    return lines[(start + 1)...].prefix { $0.hasPrefix(" ") || $0.hasPrefix("\t") }.map {
        "a poll request (\($0.drop { $0 == " " || $0 == "\t" }))"
    }
}

/// What `/proc/self/fd/<descriptor>` links to (`pipe:[1234]`, `anon_inode:[eventpoll]`, …),
/// or nil when it is not open.
public func descriptorLink(_ descriptor: Int32) -> String? {
    var target = [CChar](repeating: 0, count: 256)
    let length = readlink("/proc/self/fd/\(descriptor)", &target, target.count - 1)
    guard length > 0 else { return nil }
    return String(decoding: target[0..<length].map(UInt8.init(bitPattern:)), as: UTF8.self)
}

/// The descriptors open in this process.
public func openDescriptorNumbers() -> [Int32] {
    guard let listing = directoryListing("/proc/self/fd") else { return [] }
    return listing.names.compactMap { Int32($0) }.filter { $0 != listing.ownDescriptor }
}

/// The lines of `/proc/self/fdinfo/<descriptor>`, or nil if it cannot be read.
private func fdinfoLines(_ descriptor: Int32) -> [String]? {
    guard let file = fopen("/proc/self/fdinfo/\(descriptor)", "r") else { return nil }
    defer { fclose(file) }
    var lines: [String] = []
    var line = [CChar](repeating: 0, count: 1024)
    while fgets(&line, Int32(line.count), file) != nil {
        var text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if text.hasSuffix("\n") { text.removeLast() }
        lines.append(text)
    }
    return lines
}

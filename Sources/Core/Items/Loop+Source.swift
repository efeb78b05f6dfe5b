import DequeModule
import Glibc
import Synchronization
import SystemPackage

extension Loop {
    /// A source of events for a loop: version 0 (signalled by hand) or version 1 (a descriptor
    /// or a message port that the backend watches).
    ///
    /// A source can be in several modes of several loops. Version-0 sources are performed in a
    /// pass when signalled, by ``order`` then by the time of their first signal; version-1
    /// sources when their port is ready, by ``order``.
    public final class Source: Sendable, Hashable, CustomStringConvertible {
        enum Kind: Sendable {
            case signalled(perform: @Sendable () -> Void)
            case descriptor(Int32, Interest, handler: @Sendable (Readiness) -> Void)
            /// `deliver` hands the port's messages to the handler while the source it is given
            /// stays valid, and returns how many it handed.
            case port(Int32, deliver: @Sendable (Source) -> Int, port: any Sendable)
        }

        /// A `schedule` (joined) or `cancel` callout still to be made.
        struct MembershipCallout {
            let joined: Bool
            let loop: Loop
            let mode: Mode
        }

        let kind: Kind
        /// The actor the handler was written for; a loop refuses a source it cannot run.
        let isolation: HandlerIsolation
        /// Ties between equal orders: earlier-made sources first.
        let sequence = Ordinal.next()
        /// Sources with a lower order are performed first.
        public let order: Int
        let scheduleCallback: (@Sendable (Loop, Mode) -> Void)?
        let cancelCallback: (@Sendable (Loop, Mode) -> Void)?

        /// Zero when not signalled; otherwise the sequence number of the first signal.
        let signalStamp = Atomic<UInt64>(0)
        let valid = Atomic<Bool>(true)
        /// The loops this source is in. Lock order: a source's lock, then a loop's.
        let loops = Lock<[ObjectIdentifier: WeakLoop]>([:], rank: .item)
        /// The file a version-1 source watches, as it was when the source was made: a
        /// descriptor closed and reused for another file is never watched for this source.
        let fileIdentity: FileIdentity?
        /// `schedule` and `cancel` callouts in the order of the membership changes, queued
        /// under ``loops`` and made with no lock held by one thread at a time.
        private let callouts = Lock<(queue: Deque<MembershipCallout>, making: Bool)>(([], false))

        /// Creates a version-0 source, performed in a pass after ``signal()``.
        ///
        /// - Parameters:
        ///   - order: sources with a lower order are performed first.
        ///   - schedule: called on the adding thread when the source is added to a mode of a
        ///     loop, with that loop and mode (once per common mode for ``Mode/common``).
        ///   - cancel: called on the removing thread when the source leaves a mode of a loop.
        ///   - perform: the work, called on the loop's thread. Written in main-actor code, it is
        ///     main-actor code and the source can be added to `Loop.main` only; see
        ///     <doc:AsyncCodeAndLoops>.
        public init(
            order: Int = 0,
            schedule: (@Sendable (Loop, Mode) -> Void)? = nil,
            cancel: (@Sendable (Loop, Mode) -> Void)? = nil,
            @_inheritActorContext perform: @escaping @isolated(any) @Sendable () -> Void
        ) {
            let isolation = HandlerIsolation(perform.isolation)
            // See `HandlerIsolation`: the isolation is checked at each call instead.
            let call = unsafeBitCast(perform, to: (@Sendable () -> Void).self)
            self.kind = .signalled(perform: isolation.actor == nil ? call : isolation.checked(call))
            self.isolation = isolation
            self.order = order
            self.scheduleCallback = schedule
            self.cancelCallback = cancel
            self.fileIdentity = nil
        }

        /// Creates a version-1 source that calls `handler` while `fileDescriptor` is ready.
        ///
        /// Readiness is level-triggered and RunLoopKit never reads the descriptor: a pipe left
        /// with data keeps calling `handler`, once per pass, until it is drained. Hang-ups and
        /// errors are reported to every interest. Invalidate the source before closing the
        /// descriptor.
        ///
        /// - Parameters:
        ///   - fileDescriptor: an open descriptor that supports polling (not a regular file, a
        ///     directory or a device without readiness such as `/dev/null`).
        ///   - interest: what to watch for; must not be empty.
        ///   - order: sources with a lower order are handled first.
        ///   - handler: called on the loop's thread with what the descriptor reported. Written in
        ///     main-actor code, it is main-actor code and the source can be added to `Loop.main`
        ///     only; see <doc:AsyncCodeAndLoops>.
        /// - Throws: ``ArgumentError`` naming `fileDescriptor` or `interest` when refused.
        public init(
            fileDescriptor: Int32,
            interest: Interest = .readable,
            order: Int = 0,
            @_inheritActorContext handler: @escaping @isolated(any) @Sendable (Readiness) -> Void
        ) throws(ArgumentError) {
            try Source.validate(fileDescriptor: fileDescriptor)
            guard !interest.isEmpty, interest.isSubset(of: [.readable, .writable]) else {
                throw ArgumentError(
                    argument: "interest", value: "\(interest.rawValue == 0 ? "[]" : "rawValue \(interest.rawValue)")",
                    reason: "a descriptor source must watch for readable, writable or both")
            }
            let isolation = HandlerIsolation(handler.isolation)
            // See `HandlerIsolation`: the isolation is checked at each call instead.
            let call = unsafeBitCast(handler, to: (@Sendable (Readiness) -> Void).self)
            self.kind = .descriptor(
                fileDescriptor, interest, handler: isolation.actor == nil ? call : isolation.checked(call))
            self.isolation = isolation
            self.order = order
            self.scheduleCallback = nil
            self.cancelCallback = nil
            self.fileIdentity = FileIdentity(of: fileDescriptor)
        }

        /// Creates a version-1 source that calls `handler` while `fileDescriptor` (a
        /// swift-system `FileDescriptor`) is ready; the same as the initializer that takes an
        /// `Int32`, given `fileDescriptor.rawValue`.
        ///
        /// ```swift
        /// let (readEnd, writeEnd) = try FileDescriptor.pipe()
        /// let source = try Loop.Source(fileDescriptor: readEnd) { readiness in … }
        /// ```
        ///
        /// The source does not own the descriptor: invalidate the source, then close it.
        ///
        /// - Throws: ``ArgumentError`` naming `fileDescriptor` or `interest` when refused.
        public convenience init(
            fileDescriptor: FileDescriptor,
            interest: Interest = .readable,
            order: Int = 0,
            @_inheritActorContext handler: @escaping @isolated(any) @Sendable (Readiness) -> Void
        ) throws(ArgumentError) {
            try self.init(fileDescriptor: fileDescriptor.rawValue, interest: interest, order: order, handler: handler)
        }

        /// Creates a version-1 source that receives the messages sent to `port`.
        ///
        /// Each message is handed to `handler` on the loop's thread, in the order sent; every
        /// message present when the port is found ready is delivered in that pass. A handler
        /// that invalidates the source receives no further message: those not delivered stay
        /// in the port, in order, for whoever receives from it next. In a port with a
        /// capacity, each message taken holds its place until it is handed to `handler`.
        ///
        /// - Parameters:
        ///   - port: the port to receive from.
        ///   - order: sources with a lower order are handled first.
        ///   - handler: called once per message. Written in main-actor code, it is main-actor
        ///     code and the source can be added to `Loop.main` only; see <doc:AsyncCodeAndLoops>.
        public init<Message: Sendable>(
            port: Port<Message>,
            order: Int = 0,
            @_inheritActorContext handler: @escaping @isolated(any) @Sendable (Message) -> Void
        ) {
            let isolation = HandlerIsolation(handler.isolation)
            // See `HandlerIsolation`: the isolation is checked at each call instead.
            let unchecked = unsafeBitCast(handler, to: (@Sendable (Message) -> Void).self)
            let handler = isolation.actor == nil ? unchecked : isolation.checked(unchecked)
            self.isolation = isolation
            self.kind = .port(
                port.eventDescriptor,
                deliver: { source in port.deliverQueued(to: handler, whileValid: source) }, port: port)
            self.order = order
            self.scheduleCallback = nil
            self.cancelCallback = nil
            self.fileIdentity = FileIdentity(of: port.eventDescriptor)
        }

        /// A version-1 source of `kind` (a descriptor or a port, already checked) whose
        /// `cancel` runs whenever it leaves a mode: the source of an async sequence a loop
        /// serves, which learns that way that the loop was torn down.
        init(version1 kind: Kind, cancel: @escaping @Sendable (Loop, Mode) -> Void) {
            self.kind = kind
            // Its handler is Core's own (it resumes an awaiting task), nonisolated.
            self.isolation = HandlerIsolation(nil)
            self.order = 0
            self.scheduleCallback = nil
            self.cancelCallback = cancel
            switch kind {
            case .signalled: trap("Source(version1:cancel:) takes a descriptor or a port")
            case let .descriptor(fd, _, _), let .port(fd, _, _): self.fileIdentity = FileIdentity(of: fd)
            }
        }

        /// Whether the source can still be added and performed.
        ///
        /// Safe to call from any thread.
        public var isValid: Bool { valid.load(ordering: .acquiring) }

        /// Whether ``signal()`` was called and the source has not been performed since.
        ///
        /// Always false for version-1 sources. Safe to call from any thread.
        public var isSignalled: Bool { signalStamp.load(ordering: .acquiring) != 0 }

        /// Marks a version-0 source for performing in the next pass of each loop it is in,
        /// waking those loops if they sleep. No effect on version-1 sources.
        ///
        /// Safe to call from any thread.
        public func signal() {
            // [D5] No effect on a version-1 source.
            guard case .signalled = kind, isValid else { return }
            let stamp = Ordinal.next()
            guard signalStamp.compareExchange(expected: 0, desired: stamp, ordering: .acquiringAndReleasing).exchanged
            else {
                return // Already signalled: the first signal's time orders it.
            }
            // The loops are told with no lock held (telling may wake one). A source is almost
            // always in one loop: that one is held apart, so a signal allocates nothing.
            let (first, others): (Loop?, [Loop]) = loops.withLock { loops in
                var first: Loop?
                var others: [Loop] = []
                for entry in loops.values {
                    guard let loop = entry.loop else { continue }
                    if first == nil { first = loop } else { others.append(loop) }
                }
                return (first, others)
            }
            first?.sourceWasSignalled(self)
            for loop in others { loop.sourceWasSignalled(self) }
        }

        /// Removes the source from every mode of every loop; it is never performed again.
        ///
        /// Called on the loop's thread, this is exact. Called from another thread, a call the
        /// loop had already begun to make may still happen (the loop does not hold a lock
        /// across callouts); once a block posted to the loop after this returns has run, no
        /// call is under way and none will come.
        ///
        /// A version-1 source's descriptor leaves every loop's backend before this returns, so
        /// the caller may close it right away. `cancel` is called once per mode the source was
        /// in. Safe to call from any thread, also from inside the source's own callout.
        public func invalidate() {
            let members: [Loop] = loops.withLock { loops in
                guard valid.exchange(false, ordering: .acquiringAndReleasing) else { return [] }
                let members = loops.values.compactMap(\.loop)
                loops.removeAll()
                // Detached under this source's lock, so that the cancels queue after every
                // schedule of a join that happened before (joins check validity under it).
                for loop in members { queueCallouts(joined: false, loop: loop, modes: loop.detach(self)) }
                return members
            }
            // [D7] The descriptor leaves every backend before this returns.
            if !isVersion0 { for loop in members { loop.releaseRemovedDescriptors() } }
            makeQueuedCallouts()
        }

        /// How many loops this source is in, as the source itself records it (tests check that
        /// no loop is left behind). Safe to call from any thread.
        package var loopCount: Int { loops.withLock { $0.values.filter { $0.loop != nil }.count } }

        /// Queues a `schedule` (`joined`) or `cancel` callout per mode. Call with ``loops`` held,
        /// right after the change, so that callouts are queued in the order of the changes.
        func queueCallouts(joined: Bool, loop: Loop, modes: [Mode]) {
            guard !modes.isEmpty, (joined ? scheduleCallback : cancelCallback) != nil else { return }
            callouts.withLock { callouts in
                for mode in modes { callouts.queue.append(MembershipCallout(joined: joined, loop: loop, mode: mode)) }
            }
        }

        /// Makes the queued callouts, in order, with no lock held. When another thread (or an
        /// outer frame of this one: a callout that adds or removes this source) is making them
        /// already, it makes ours too, after its own.
        func makeQueuedCallouts() {
            guard scheduleCallback != nil || cancelCallback != nil else { return }
            let starts: Bool = callouts.withLock { callouts in
                guard !callouts.making, !callouts.queue.isEmpty else { return false }
                callouts.making = true
                return true
            }
            guard starts else { return }
            while let callout = callouts.withLock({ callouts -> MembershipCallout? in
                if let next = callouts.queue.popFirst() { return next }
                callouts.making = false
                return nil
            }) {
                if callout.joined {
                    scheduleCallback?(callout.loop, callout.mode)
                } else {
                    cancelCallback?(callout.loop, callout.mode)
                }
            }
        }

        /// The source's kind (version 0, descriptor and interest, or port) and order, for messages.
        public var description: String {
            switch kind {
            case .signalled: "Source(version 0, order \(order))"
            case let .descriptor(fd, interest, _): "Source(fd \(fd), \(interest), order \(order))"
            case let .port(fd, _, _): "Source(port fd \(fd), order \(order))"
            }
        }

        /// Whether both are the same source: two sources are two items, whatever their callbacks.
        public static func == (lhs: Source, rhs: Source) -> Bool { lhs === rhs }
        /// Hashes the source's identity.
        public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

        var isVersion0: Bool {
            if case .signalled = kind { return true }
            return false
        }

        /// The descriptor and interest a version-1 source needs watched.
        var watchedDescriptor: (fd: Int32, interest: Interest)? {
            switch kind {
            case .signalled: nil
            case let .descriptor(fd, interest, _): (fd, interest)
            case let .port(fd, _, _): (fd, .readable)
            }
        }
    }
}

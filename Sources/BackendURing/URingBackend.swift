#if URing
internal import CLibURing
import Glibc
import RunLoopCore
import SystemPackage

/// The io_uring backend: one-shot poll requests on a ring, nanosecond waits in one
/// `io_uring_enter`, and a waker that posts straight into the ring.
///
/// Level-triggered, like every backend: each registration has one one-shot poll request,
/// re-armed before the next wait after it completes (see `armPolls`). Every request carries
/// its kind and a never-reused id in its `user_data` (`URingRequest`); unregistering forgets
/// the id and cancels the request at once, so a completion that arrives later — readiness
/// that raced with the unregister, the `-ECANCELED`, the cancellation's own — is dropped and
/// never delivered.
///
/// Created on any thread; used (except for its `waker`) on one thread at a time. Requires
/// Linux 5.18 (`IORING_OP_MSG_RING`).
public final class URingBackend: Backend {
    /// Always `BackendKind.uring`.
    public let kind: BackendKind = .uring
    /// The waker that posts an `IORING_OP_MSG_RING` into this ring: safe from any thread; a
    /// wake while one is pending sends nothing.
    public var waker: any BackendWaker { uringWaker }
    /// The ring's own descriptor, which polls readable while its completion queue holds an
    /// entry: a poll request's (once armed by the preparation step, ``prepareForHostWait()``) or the waker's
    /// `IORING_OP_MSG_RING`. Tested, not assumed, under this ring's setup flags
    /// (`COOP_TASKRUN`: a poll's completion runs as task work on the loop's thread, which the
    /// kernel wakes from `poll(2)` to run it, so the entry is posted even while a host sleeps
    /// there): `EmbeddingTests` and the conformance kit fail if a kernel stops doing so.
    /// No eventfd is needed beside the ring.
    public var embedding: EmbeddingSupport { .descriptor(ring.descriptor, prepare: hostWaitPreparation) }

    /// ``prepareForHostWait()`` as ``embedding``'s step, made once: a host's every prepare reads
    /// `embedding`, and a closure made there would be an allocation per pass.
    private lazy var hostWaitPreparation: () throws(SystemError) -> Void = { [unowned self] () throws(SystemError) in
        try prepareForHostWait()
    }

    /// None: Core's descriptors only.
    public var ownSources: OwnSourceServing { .none }

    /// The ring's descriptor: for tests that read the kernel's own account of its poll
    /// requests (`/proc/self/fdinfo`), which no public API gives.
    package var ringDescriptor: Int32 { ring.descriptor }

    /// One watched descriptor.
    private struct Registration {
        var token: Token
        var interest: Interest
        /// The poll request watching it now, or `nil` when it must be armed before the next wait.
        var armedPoll: UInt64?
        /// Its poll request failed (e.g. `EBADF`): reported once as an error, never re-armed.
        var failed = false
        /// The file the descriptor named when registered (device, inode). A poll is re-armed by
        /// descriptor number, so before re-arming, the number must still name this file.
        var file: FileIdentity
        /// A poll completed since this was armed: the next arming re-checks the file.
        var completed = false
    }

    private let ring: URingRing
    private let uringWaker: URingWaker
    private var registrations: [Int32: Registration] = [:]
    /// The live poll requests and the descriptor each watches. A completion whose id is not
    /// here belongs to a request that was cancelled (unregister, modify) and is dropped.
    private var pollOwners: [UInt64: Int32] = [:]
    private var lastPollID: UInt64 = 0
    /// Descriptors whose poll must be armed before the next wait (may hold stale entries).
    private var needsArming: [Int32] = []
    /// The descriptors being armed now: `needsArming`'s previous contents, swapped out so that
    /// neither buffer is ever copied (a copy would make the next `removeAll` allocate anew).
    private var arming: [Int32] = []
    /// Events harvested but not yet handed out (a harvest can happen outside `wait`, when a
    /// full submission queue had to be flushed).
    private var ready: [ReadyEvent] = []
    /// The waker's completion arrived since the last wait returned.
    private var woken = false

    /// Creates a ring and its waker.
    ///
    /// The ring is shared by no one else and is created without `IORING_SETUP_SINGLE_ISSUER`
    /// or `DEFER_TASKRUN`: the main loop's backend is created on one thread and then used on
    /// another. Safe to call from any thread.
    ///
    /// - Throws: `BackendError.unavailable` when io_uring cannot start here (with the
    ///   reason: kernel too old, disabled by sysctl, refused by a sandbox, locked-memory
    ///   limit); `SystemError` for any other failure.
    public init() throws {
        do {
            // COOP_TASKRUN: completions are run when this thread enters the kernel (it always
            // does, in `wait`) instead of interrupting it; a sleeping waiter is still woken.
            // SUBMIT_ALL: one failing entry (a closed descriptor) must not hold back the rest.
            ring = try URingRing(
                entries: 256,
                completionEntries: 4096,
                flags: UInt32(IORING_SETUP_COOP_TASKRUN) | UInt32(IORING_SETUP_SUBMIT_ALL)
            )
            try Self.requireOperations(of: ring)
            uringWaker = try URingWaker(target: ring.descriptor)
        } catch let error as SystemError {
            throw BackendError.unavailable(
                .uring, Self.unavailability(setupErrno: error.errno, ioUringDisabled: Self.readIoUringDisabled()))
        }
    }

    deinit {
        // The waker may outlive us (any thread may hold it): stop it sending to our ring's
        // descriptor before the ring closes it.
        uringWaker.detach()
    }

    /// Starts watching `descriptor`: its one-shot poll is armed by the next wait, in the same
    /// `io_uring_enter` that sleeps.
    ///
    /// - Throws: `SystemError` (named `io_uring_prep_poll_add`): `EEXIST` when already registered,
    ///   `EBADF` when negative or closed, `EPERM` for a regular file or directory.
    public func register(_ descriptor: Int32, token: Token, interest: Interest) throws(SystemError) {
        guard registrations[descriptor] == nil else { throw SystemError("io_uring_prep_poll_add", errno: EEXIST) }
        // Checked now, as epoll_ctl does, rather than when the poll is armed in the next wait:
        // a closed descriptor, and a file that is always ready, are refused at registration.
        guard descriptor >= 0, let info = try? FileDescriptor(rawValue: descriptor).stat() else {
            throw SystemError("io_uring_prep_poll_add", errno: EBADF)
        }
        guard !info.isAlwaysReady else { throw SystemError("io_uring_prep_poll_add", errno: EPERM) }
        // Armed by the next wait, in the same `io_uring_enter` that sleeps.
        registrations[descriptor] = Registration(token: token, interest: interest, file: FileIdentity(info))
        needsArming.append(descriptor)
    }

    /// Stops watching `descriptor` and submits the cancellation of its poll at once, so that the
    /// ring lets go of the file before this returns; a descriptor not registered is no error.
    /// Completions that arrive for it later are dropped.
    ///
    /// - Throws: `SystemError` from `io_uring_submit` when the cancellation cannot be submitted.
    public func unregister(_ descriptor: Int32, token: Token) throws(SystemError) {
        guard let registration = registrations.removeValue(forKey: descriptor) else { return }
        ready.removeAll { $0.token == registration.token }
        guard let poll = registration.armedPoll else { return }
        // Forget the request first: whatever completion it still produces (readiness that
        // raced with us, or -ECANCELED) no longer has an owner and is dropped.
        pollOwners[poll] = nil
        let entry = try nextEntry()
        io_uring_prep_poll_remove(entry, URingRequest.poll(id: poll).userData)
        io_uring_sqe_set_data64(entry, URingRequest.cancel.userData)
        // Submitted now, not with the next wait: the poll holds a reference to the file, and a
        // descriptor the caller closes next must really close (a peer must see the hang-up).
        try submitQueued()
    }

    /// Arms the polls that need it and waits in one `io_uring_submit_and_wait_timeout`, the timeout
    /// to the nanosecond, then reports the ready descriptors. A signal ends the wait early with
    /// nothing reported.
    ///
    /// - Throws: `SystemError` when the ring reports a failure other than a timeout or an
    ///   interruption.
    public func wait(timeout: Duration?, into events: inout [ReadyEvent]) throws(SystemError) {
        events.removeAll(keepingCapacity: true)
        let start = ContinuousClock.now
        while true {
            try armPolls()
            var remaining = timeout.map { max(.zero, $0 - (ContinuousClock.now - start)) }
            if !ready.isEmpty || woken { remaining = .zero }
            let result = ring.submitAndWait(timeout: remaining)
            switch result {
            case 0..., -ETIME, -EINTR: break
            case -EBUSY, -EAGAIN: break // The completion queue is backed up: harvest, then retry.
            default: throw SystemError("io_uring_submit_and_wait_timeout", errno: -result)
            }
            harvest()
            // Return only for an event, a wake or the timeout: a harvest of nothing but
            // cancellations, or an early return (a signal), waits again for the rest.
            if !ready.isEmpty || woken || result == -ETIME || remaining == .zero { break }
            if let timeout, ContinuousClock.now - start >= timeout { break }
        }
        woken = false
        swap(&events, &ready)
    }

    /// Arms the polls that need it and submits them, without waiting: a host loop is about to
    /// wait on the ring's descriptor, which only an armed poll's completion makes readable.
    ///
    /// Events already harvested (a full submission queue was flushed) or a wake already
    /// consumed would not show on the descriptor: a no-op request is submitted then, whose
    /// completion makes it readable at once, and the next wait drops it.
    ///
    /// The preparation step of ``embedding``'s descriptor, which `Loop.prepareForHost(in:)` runs.
    ///
    /// - Throws: `SystemError` from `io_uring_submit`.
    public func prepareForHostWait() throws(SystemError) {
        try armPolls()
        if !ready.isEmpty || woken {
            let entry = try nextEntry()
            io_uring_prep_nop(entry)
            io_uring_sqe_set_data64(entry, URingRequest.cancel.userData)
        }
        try submitQueued()
    }

    // MARK: - Submissions

    /// Arms a one-shot poll for every registration that has none.
    ///
    /// Why one-shot, re-armed after each completion, and not multishot: a multishot poll only
    /// posts a completion on a new wake-up of the file (edge-like), so a pipe left unread
    /// would never be reported again. Arming a poll checks the file's current state and
    /// completes at once if it is ready, so re-arming before every wait is level-triggered by
    /// construction — and the re-arm rides in the `io_uring_enter` that waits, at no extra
    /// system call. A multishot poll would need the same re-check (an extra `poll(2)` or a
    /// re-arm) for every descriptor it reported.
    private func armPolls() throws(SystemError) {
        guard !needsArming.isEmpty else { return }
        // Swapped, not copied: a copy shares `needsArming`'s buffer, and emptying it then
        // allocates a new one, once per pass that re-arms a poll.
        swap(&arming, &needsArming)
        defer { arming.removeAll(keepingCapacity: true) }
        for descriptor in arming {
            guard let registration = registrations[descriptor], registration.armedPoll == nil, !registration.failed
            else { continue }
            // The registered file was closed behind Core's back and the number reused: never
            // watch the stranger for this registration. Reported once as an error, which Core
            // recognises as that misuse.
            if registration.completed, FileIdentity(of: descriptor) != registration.file {
                registrations[descriptor]!.failed = true
                ready.append(ReadyEvent(token: registration.token, readiness: .error))
                continue
            }
            lastPollID += 1
            let entry = try nextEntry()
            io_uring_prep_poll_add(entry, descriptor, Self.pollMask(for: registration.interest))
            io_uring_sqe_set_data64(entry, URingRequest.poll(id: lastPollID).userData)
            registrations[descriptor]!.armedPoll = lastPollID
            pollOwners[lastPollID] = descriptor
        }
    }

    /// A free submission entry; when the queue is full, submits what it holds first.
    private func nextEntry() throws(SystemError) -> UnsafeMutablePointer<io_uring_sqe> {
        while true {
            if let entry = ring.nextEntry() { return entry }
            try submitQueued()
        }
    }

    /// Submits every queued entry without waiting.
    private func submitQueued() throws(SystemError) {
        while true {
            let result = ring.submit()
            switch result {
            case 0...: return
            case -EINTR: continue
            // The kernel holds completions it could not post (EBUSY) or is short of memory
            // for a moment (EAGAIN): make room by harvesting, then submit again.
            case -EBUSY, -EAGAIN: harvest()
            default: throw SystemError("io_uring_submit", errno: -result)
            }
        }
    }

    // MARK: - Completions

    /// Turns every available completion into events, wakes and re-arm requests.
    private func harvest() {
        ring.harvest { userData, result in
            switch URingRequest(userData: userData) {
            case .wake:
                woken = true
                uringWaker.consume()
            case let .poll(id):
                complete(poll: id, result: result)
            case .cancel, .foreign:
                break // Bookkeeping, never an event.
            }
        }
    }

    private func complete(poll id: UInt64, result: Int32) {
        // Not an owned request: cancelled by unregister or modify. Drop it.
        guard let descriptor = pollOwners.removeValue(forKey: id) else { return }
        registrations[descriptor]!.armedPoll = nil
        registrations[descriptor]!.completed = true
        let token = registrations[descriptor]!.token
        switch result {
        case 0...:
            needsArming.append(descriptor)
            ready.append(ReadyEvent(token: token, readiness: Self.readiness(of: UInt32(bitPattern: result))))
        case -ECANCELED:
            // Cancelled by the kernel, not by us (the thread that armed it exited): nothing
            // happened to the descriptor; arm it again.
            needsArming.append(descriptor)
        default:
            // The request itself failed (a descriptor closed before it was armed): say so once;
            // re-arming would fail the same way on every wait.
            registrations[descriptor]!.failed = true
            ready.append(ReadyEvent(token: token, readiness: .error))
        }
    }

    // MARK: - Poll masks

    /// `POLLRDHUP` (Linux-specific, not in Glibc's Swift module).
    private static let pollReadHangup: UInt32 = 0x2000

    private static func pollMask(for interest: Interest) -> UInt32 {
        var mask: UInt32 = 0
        if interest.contains(.readable) { mask |= UInt32(POLLIN) | pollReadHangup }
        if interest.contains(.writable) { mask |= UInt32(POLLOUT) }
        return mask
    }

    private static func readiness(of mask: UInt32) -> Readiness {
        var readiness: Readiness = []
        if mask & UInt32(POLLIN) != 0 { readiness.insert(.readable) }
        if mask & UInt32(POLLOUT) != 0 { readiness.insert(.writable) }
        if mask & (UInt32(POLLHUP) | pollReadHangup) != 0 { readiness.insert(.hangup) }
        if mask & UInt32(POLLERR) != 0 { readiness.insert(.error) }
        return readiness
    }
}
#endif
